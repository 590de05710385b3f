/**
 * The kubeconfig of a client that reaches the API server through a local proxy of the caller's
 * (a test's watch proxy, the fault campaign's proxy): plain http://127.0.0.1:<port> and no
 * credentials, since the proxy authenticates upstream itself. Written mode 0600, like any
 * kubeconfig.
 */
import { writeFileSync } from 'node:fs';

export function writeProxyKubeconfig(path: string, port: number): void {
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'proxy', cluster: { server: `http://127.0.0.1:${port}`, 'insecure-skip-tls-verify': true } }],
      users: [{ name: 'proxy', user: {} }],
      contexts: [{ name: 'proxy', context: { cluster: 'proxy', user: 'proxy', namespace: 'default' } }],
      'current-context': 'proxy',
    }),
    { mode: 0o600 },
  );
}
