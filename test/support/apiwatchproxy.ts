/**
 * An HTTP proxy in front of the API server that sees each request, so a test can hold back,
 * delay, add to or mangle the watch of ONE resource for ONE operator process (apiProxy in
 * proxy.ts cuts whole TCP connections, blind to what they carry).
 *
 * The operator talks plain HTTP to it (its kubeconfig names http://127.0.0.1:<port> and no
 * credentials); the proxy forwards every request over HTTPS as the control plane's admin, the
 * User-Agent kept, so the audit log still tells the operator's writes apart. Requests other than
 * the chosen watches pass untouched and at once.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { Agent, request as httpsRequest } from 'node:https';
import { writeProxyKubeconfig } from '../../scripts/testbed/proxykubeconfig.js';
import { currentKubeconfig, kubeconfig } from './kube.js';

export interface WatchProxy {
  /** A kubeconfig whose server is this proxy. */
  kubeconfig: string;
  /** Watch events of matching watches reach the client this long after the server sent them. */
  delay(ms: number): void;
  /** Matching watches deliver nothing until release(); what they held is then sent in order. */
  stall(): void;
  release(): void;
  /**
   * Sends `line` (and a newline) down every open matching watch, between two of the server's
   * events, as if the server had sent it; resolves with how many watches got it.
   */
  inject(line: string): number;
  /**
   * The next line of the server's that `match` picks, in any matching watch, reaches the client as
   * `rewrite` makes it instead (e.g. cut short, so it is no JSON); once: the same event sent again
   * (by a later watch) passes untouched. `done()` says whether it has happened.
   */
  mangleOnce(match: (line: string) => boolean, rewrite: (line: string) => string): { done(): boolean };
  /** Whether a line that `match` picks has been passed on to the client, in any matching watch. */
  delivered(match: (line: string) => boolean): boolean;
}

export interface WatchProxyOptions {
  /** Which watches to hold back, by request path (e.g. /echos$/). */
  watches: RegExp;
  /** The control plane to forward to (default: the tests' shared one). */
  kubeconfig?: string;
}

export async function watchProxy(t: { after(fn: () => unknown): void }, options: WatchProxyOptions): Promise<WatchProxy> {
  const source = options.kubeconfig ?? kubeconfig();
  const { cluster, user } = currentKubeconfig(source);
  const target = new URL(cluster.server);
  const b64 = (v: string): string => Buffer.from(v, 'base64').toString('utf8');
  const ca = cluster['certificate-authority-data'];
  if (!ca) throw new Error('the kubeconfig has no certificate-authority-data to verify the API server with');
  const agent = new Agent({
    keepAlive: true,
    ca: b64(ca),
    cert: user['client-certificate-data'] ? b64(user['client-certificate-data']) : undefined,
    key: user['client-key-data'] ? b64(user['client-key-data']) : undefined,
  });
  const token = user.token;
  let delayMs = 0;
  let stalled = false;
  const held = new Set<() => void>();
  /** Every line passed on to a client by a matching watch, in order. */
  const passedOn: string[] = [];
  const open = new Set<IncomingMessage>();
  /** Per open matching watch: puts a chunk in its stream, in order with the server's. */
  const injectors = new Set<(chunk: Buffer) => void>();
  /** Armed by mangleOnce, in order; each is dropped once it has rewritten a line. */
  const manglers: { match: (line: string) => boolean; rewrite: (line: string) => string; done: boolean }[] = [];
  /** Whole lines of a server's chunk, with the first line each armed mangler picks rewritten. */
  const mangle = (lines: Buffer): Buffer => {
    if (!manglers.some((m) => !m.done)) return lines;
    const out = lines
      .toString('utf8')
      .split('\n')
      .map((line) => {
        const m = manglers.find((x) => !x.done && line !== '' && x.match(line));
        if (!m) return line;
        m.done = true;
        return m.rewrite(line);
      });
    return Buffer.from(out.join('\n'));
  };

  /** Passes a chunk on after the delay, or when released; order is kept per stream. */
  const deliver = (queue: Buffer[], flush: () => void, chunk: Buffer): void => {
    queue.push(chunk);
    const go = (): void => {
      if (stalled) {
        held.add(go);
        return;
      }
      flush();
    };
    if (delayMs > 0) setTimeout(go, delayMs);
    else go();
  };

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', target);
    const isWatch = url.searchParams.get('watch') === 'true' || url.searchParams.get('watch') === '1';
    const holdBack = isWatch && options.watches.test(url.pathname);
    const headers = { ...req.headers, host: target.host };
    if (token) headers.authorization = `Bearer ${token}`;
    const upstream = httpsRequest(url, { method: req.method, headers, agent }, (up) => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      if (!holdBack) {
        up.pipe(res);
        return;
      }
      open.add(up);
      const queue: Buffer[] = [];
      let ended = false;
      const flush = (): void => {
        const next = queue.shift();
        if (next !== undefined) {
          res.write(next);
          passedOn.push(...next.toString('utf8').split('\n').filter(Boolean));
        }
        if (ended && queue.length === 0) res.end();
      };
      // Whole lines only, so an injected line always falls between two events.
      let partial: Buffer = Buffer.alloc(0);
      up.on('data', (chunk: Buffer) => {
        const data = partial.length ? Buffer.concat([partial, chunk]) : chunk;
        const nl = data.lastIndexOf(0x0a);
        partial = data.subarray(nl + 1);
        if (nl >= 0) deliver(queue, flush, mangle(data.subarray(0, nl + 1)));
      });
      const inject = (chunk: Buffer): void => deliver(queue, flush, chunk);
      injectors.add(inject);
      up.on('end', () => {
        ended = true;
        injectors.delete(inject);
        deliver(queue, flush, partial);
      });
      up.on('error', () => res.destroy());
      up.on('close', () => {
        open.delete(up);
        injectors.delete(inject);
      });
    });
    upstream.on('error', () => res.destroy());
    res.on('close', () => upstream.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const up of open) up.destroy();
    server.closeAllConnections();
    server.close();
    agent.destroy();
  });
  const port = (server.address() as { port: number }).port;
  const path = `${source}.watchproxy-${process.pid}-${port}`;
  writeProxyKubeconfig(path, port);
  return {
    kubeconfig: path,
    delay: (ms) => {
      delayMs = ms;
    },
    stall: () => {
      stalled = true;
    },
    release: () => {
      stalled = false;
      const waiting = [...held];
      held.clear();
      for (const go of waiting) go();
    },
    inject: (line) => {
      for (const inject of injectors) inject(Buffer.from(`${line}\n`));
      return injectors.size;
    },
    mangleOnce: (match, rewrite) => {
      const m = { match, rewrite, done: false };
      manglers.push(m);
      return { done: () => m.done };
    },
    delivered: (match) => passedOn.some(match),
  };
}
