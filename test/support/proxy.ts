/**
 * A TCP proxy in front of the API server that a test can hold shut, open, and cut: the way to
 * make one operator process lose the API server while the others keep it.
 */
import { writeFileSync } from 'node:fs';
import { connect, createServer, type Socket } from 'node:net';
import { currentKubeconfig, kubeconfig } from './kube.js';
import { trackPair } from './socketpair.js';

export interface ApiProxy {
  /** A kubeconfig whose server is this proxy. */
  kubeconfig: string;
  /** Forward connections (the held ones are dropped so that clients reconnect through). */
  open(): void;
  /** Drop every connection and hold new ones until open() again. */
  cut(): void;
  /** Connections made to the proxy so far, held or forwarded. */
  attempts(): number;
}

export async function apiProxy(t: { after(fn: () => unknown): void }, initiallyOpen: boolean): Promise<ApiProxy> {
  const { view, cluster } = currentKubeconfig();
  const target = new URL(cluster.server);
  let open = initiallyOpen;
  const held: Socket[] = [];
  const live = new Set<Socket>();
  const forward = (client: Socket): void => {
    const upstream = connect(Number(target.port), target.hostname);
    const close = trackPair(client, upstream, live);
    client.pipe(upstream).pipe(client);
    client.on('error', close).on('close', close);
    upstream.on('error', close).on('close', close);
  };
  let attempts = 0;
  const server = createServer((client) => {
    attempts++;
    if (open) forward(client);
    else {
      held.push(client);
      client.on('error', () => undefined);
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of [...live, ...held]) s.destroy();
    server.close();
  });
  const port = (server.address() as { port: number }).port;
  cluster.server = `https://127.0.0.1:${port}`;
  const path = `${kubeconfig()}.proxy-${process.pid}-${port}`;
  writeFileSync(path, JSON.stringify(view), { mode: 0o600 });
  return {
    kubeconfig: path,
    open: () => {
      open = true;
      for (const c of held.splice(0)) c.destroy();
    },
    cut: () => {
      open = false;
      for (const s of live) s.destroy();
      live.clear();
    },
    attempts: () => attempts,
  };
}
