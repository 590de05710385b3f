/**
 * The part of @kubernetes/client-node the operator runs, and nothing that loads more.
 *
 * The operator uses client-node's KubeConfig (loading kubeconfig files and in-cluster config,
 * client certificates, tokens, exec credential plugins) and the V1MicroTime type; its own
 * transport does the rest (src/kube/rest.ts). Bundled as the package's index imports it, every
 * generated API class and model, and every module-level object they build, was loaded at start:
 * measured, the bundle's load alone took RSS from 40 to 63 MB and its malloc heap from 2.6 to
 * 11.5 MiB (parsing and running ~500 KB of code the operator never calls).
 *
 * This esbuild plugin makes `@kubernetes/client-node` resolve, in the bundle only, to a module
 * with just those two exports, and makes what KubeConfig imports but rarely uses load on first
 * use instead of at start (esbuild initializes a module reached only through require() when
 * require() runs): the legacy auth-provider plugins (oidc, azure, gcp: their isAuthProvider
 * test is repeated here, so that picking one loads nothing else) and the SOCKS agent (only for
 * a socks5 proxy-url). Those keep working; only their cost moves to the moment they are used.
 * The generated API is left out (only KubeConfig.makeApiClient needs it, and calling it says
 * so): required lazily it would be bundled whole, 2.3 MiB more, since esbuild cannot tree-shake
 * a module reached through require(). So is undici, the fetch dispatcher that only the generated
 * API's authentication (applySecurityAuthentication) builds: it too says so. Any other runtime import of client-node from src/ fails
 * the build, rather than silently loading the package again.
 */
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import type { Plugin } from 'esbuild';

const dist = dirname(createRequire(import.meta.url).resolve('@kubernetes/client-node/dist/config.js'));

/** What src/ may import at run time from '@kubernetes/client-node'. */
const ENTRY = `export { KubeConfig } from ${JSON.stringify(join(dist, 'config.js'))};
export { V1MicroTime } from ${JSON.stringify(join(dist, 'types.js'))};`;

const real = (file: string): string => JSON.stringify(join(dist, file));

/** An auth-provider plugin of client-node, loaded when a kubeconfig user names it. */
const authProvider = (file: string, className: string, name: string): string => `
export class ${className} {
  #real;
  isAuthProvider(user) { return user?.authProvider?.name === ${JSON.stringify(name)}; }
  applyAuthentication(user, opts) {
    this.#real ??= new (require(${real(file)}).${className})();
    return this.#real.applyAuthentication(user, opts);
  }
}`;

/** The start of a stand-in module whose exports throw `absent()`: `what` is not in the bundle. */
const absent = (what: string): string =>
  `const absent = () => new Error(${JSON.stringify(`${what} is not part of the echoperator bundle (src/kube/rest.ts is its transport)`)});`;
const API_CLIENT = absent('KubeConfig.makeApiClient');

/** Modules imported by client-node's config.js, by import specifier, and what stands in for them. */
const LAZY: Record<string, string> = {
  './gen/index.js': `${API_CLIENT}
export function createConfiguration() { throw absent(); }
export class ServerConfiguration { constructor() { throw absent(); } }`,
  // The generated API's middleware (it imports gen/rxjsStub.js), used only by makeApiClient.
  './middleware.js': `${API_CLIENT}
export function setHeaderMiddleware() { throw absent(); }`,
  './oidc_auth.js': authProvider('oidc_auth.js', 'OpenIDConnectAuth', 'oidc'),
  './azure_auth.js': authProvider('azure_auth.js', 'AzureAuth', 'azure'),
  './gcp_auth.js': authProvider('gcp_auth.js', 'GoogleCloudPlatformAuth', 'gcp'),
  // KubeConfig's fetch dispatcher (createDispatcher, reached only from applySecurityAuthentication,
  // the generated API's authentication): undici 8, which needs Node 22.19 and was ~60% of the
  // bundle (1.15 MiB with it, 456 KiB without).
  undici: `${absent("KubeConfig's undici dispatcher")}
export class Agent { constructor() { throw absent(); } }
export class ProxyAgent { constructor() { throw absent(); } }`,
  'socks-proxy-agent': `
export class SocksProxyAgent {
  constructor(...args) { return new (require(${JSON.stringify(createRequire(join(dist, 'config.js')).resolve('socks-proxy-agent'))}).SocksProxyAgent)(...args); }
}`,
};

export const clientNodeKubeConfigOnly: Plugin = {
  name: 'client-node-kubeconfig-only',
  setup(build) {
    build.onResolve({ filter: /^@kubernetes\/client-node$/ }, () => ({ path: 'entry', namespace: 'client-node' }));
    const specifiers = new RegExp(
      `^(${Object.keys(LAZY)
        .map((k) => k.replace(/[./]/g, '\\$&'))
        .join('|')})$`,
    );
    build.onResolve({ filter: specifiers }, (args) =>
      args.importer === join(dist, 'config.js') ? { path: args.path, namespace: 'client-node' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'client-node' }, (args) => ({
      contents: args.path === 'entry' ? ENTRY : LAZY[args.path],
      resolveDir: dist,
      loader: 'js',
    }));
  },
};
