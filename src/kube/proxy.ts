/**
 * Which proxy, if any, a request to the API server goes through, decided as client-go decides it:
 *
 *  - the kubeconfig cluster's `proxy-url`, when set, for every request to that cluster (loopback
 *    included): http, https or socks5 (client-go's accepted schemes);
 *  - else the environment, as Go's http.ProxyFromEnvironment reads it: HTTPS_PROXY (or
 *    https_proxy) for an https server, HTTP_PROXY (or http_proxy) for an http one, a value
 *    without a scheme meaning http://; never for `localhost` or a loopback address; not for a
 *    host NO_PROXY (or no_proxy) matches.
 *
 * NO_PROXY is a comma-separated list, each entry trimmed and case-insensitive: `*` matches
 * everything; an IP address, or a CIDR block, matches addresses (only when the host IS an
 * address: names are not resolved); a name matches itself and its subdomains (`example.com`),
 * only its subdomains when it starts with a dot (`.example.com`, also `*.example.com`); an entry
 * with `:port` matches only that port (the server's, 443 or 80 when its URL has none).
 *
 * Written here because client-node does not decide this (it applies `proxy-url` only, and only
 * to its own agents), and no maintained npm package implements Go's rules: they differ from
 * curl's (loopback, CIDR blocks, ports, `*.` entries).
 */
import { BlockList, isIP } from 'node:net';
import { redactProxy } from './redact.js';

/** client-go's: http and https proxies (CONNECT), SOCKS5 (socks5h is Go's alias for it). */
export const PROXY_SCHEMES = ['http:', 'https:', 'socks5:', 'socks5h:'] as const;

export class ProxyConfigError extends Error {
  override readonly name = 'ProxyConfigError';
}

/**
 * A proxy URL as Go reads one: a value without a scheme is read as http://value. Throws a
 * ProxyConfigError naming `setting` when it is no URL, or its scheme is none of PROXY_SCHEMES;
 * the value it quotes has everything before its last `@` redacted (redactProxy).
 */
export function parseProxyUrl(value: string, setting: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(/^[a-z][a-z0-9+.-]*:\/\//i.test(value) ? value : `http://${value}`);
  } catch {
    url = undefined;
  }
  if (!url?.hostname) {
    throw new ProxyConfigError(
      `${setting} is not a proxy URL: ${JSON.stringify(redactProxy(value))}; expected e.g. http://proxy.example:3128`,
    );
  }
  if (!(PROXY_SCHEMES as readonly string[]).includes(url.protocol)) {
    throw new ProxyConfigError(
      `${setting} has the scheme ${url.protocol.replace(/:$/, '')} (${JSON.stringify(redactProxy(value))}); accepted: http, https, socks5`,
    );
  }
  return url;
}

/** A host as URL.hostname gives it, without the brackets of an IPv6 address. */
function bare(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}

function defaultPort(url: URL): string {
  return url.port || (url.protocol === 'https:' ? '443' : '80');
}

function isLoopback(host: string): boolean {
  if (host === 'localhost') return true;
  const family = isIP(host);
  if (family === 4) return host.startsWith('127.');
  if (family === 6) {
    const loop = new BlockList();
    loop.addAddress('::1', 'ipv6');
    // IPv4-mapped loopback (::ffff:127.x.y.z) is loopback too, as Go's IsLoopback says.
    loop.addSubnet('::ffff:127.0.0.0', 104, 'ipv6');
    return loop.check(host, 'ipv6');
  }
  return false;
}

interface NoProxyEntry {
  matches(host: string, port: string): boolean;
}

/** Go's httpproxy.config.init, entry by entry. */
function parseNoProxy(value: string): NoProxyEntry[] | 'all' {
  const entries: NoProxyEntry[] = [];
  for (const raw of value.split(',')) {
    const p = raw.trim().toLowerCase();
    if (!p) continue;
    if (p === '*') return 'all';
    const cidr = /^(.+)\/(\d{1,3})$/.exec(p);
    if (cidr && isIP(cidr[1]!)) {
      const family = isIP(cidr[1]!) === 4 ? 'ipv4' : 'ipv6';
      const prefix = Number(cidr[2]);
      if (prefix > (family === 'ipv4' ? 32 : 128)) continue;
      const block = new BlockList();
      block.addSubnet(cidr[1]!, prefix, family);
      entries.push({ matches: (host) => isIP(host) === (family === 'ipv4' ? 4 : 6) && block.check(host, family) });
      continue;
    }
    // host:port or [v6]:port; a bare IPv6 address has colons but no port.
    let host = p;
    let port = '';
    const withPort = /^(\[[^\]]+\]|[^:]*):(\d+)$/.exec(p);
    if (withPort && !isIP(p)) {
      host = bare(withPort[1]!);
      port = withPort[2]!;
      if (!host) continue;
    }
    if (isIP(host)) {
      const family = isIP(host) === 4 ? 'ipv4' : 'ipv6';
      const one = new BlockList();
      one.addAddress(host, family);
      entries.push({ matches: (h, hp) => isIP(h) === isIP(host) && one.check(h, family) && (!port || port === hp) });
      continue;
    }
    if (host.startsWith('*.')) host = host.slice(1);
    const matchHost = !host.startsWith('.');
    const suffix = matchHost ? `.${host}` : host;
    entries.push({ matches: (h, hp) => (h.endsWith(suffix) || (matchHost && h === host)) && (!port || port === hp) });
  }
  return entries;
}

export type ProxyEnv = Record<string, string | undefined>;

function envAny(env: ProxyEnv, ...names: string[]): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name];
    if (value) return { name, value };
  }
  return undefined;
}

/**
 * The proxy for requests to `server` (undefined: connect directly). `proxyUrl` is the kubeconfig
 * cluster's proxy-url. Throws a ProxyConfigError for a value that is not a usable proxy URL, so
 * the process can stop at start with the setting's name.
 */
export function proxyFor(server: URL, proxyUrl: string | undefined, env: ProxyEnv = process.env): URL | undefined {
  if (proxyUrl) return parseProxyUrl(proxyUrl, "the kubeconfig cluster's proxy-url");
  const https = server.protocol === 'https:';
  const setting = https ? envAny(env, 'HTTPS_PROXY', 'https_proxy') : envAny(env, 'HTTP_PROXY', 'http_proxy');
  if (!setting) return undefined;
  const proxy = parseProxyUrl(setting.value, setting.name);
  const host = bare(server.hostname).toLowerCase();
  if (isLoopback(host)) return undefined;
  const noProxy = parseNoProxy(envAny(env, 'NO_PROXY', 'no_proxy')?.value ?? '');
  if (noProxy === 'all') return undefined;
  const port = defaultPort(server);
  return noProxy.some((e) => e.matches(host, port)) ? undefined : proxy;
}
