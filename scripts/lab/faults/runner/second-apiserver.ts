/**
 * A second kube-apiserver over the campaign's etcd whose view lags (the stale-apiserver class,
 * Sieve's "time travel"): it reaches etcd through a link that holds etcd's answers back by a
 * settable delay, so its watch cache, the LISTs it serves from that cache, the watches it serves,
 * and even its quorum GETs (answered from etcd d late) show the cluster as it was d ago. Its
 * Leases go straight to etcd (--etcd-servers-overrides), so a replica on it keeps its Lease on
 * time while everything else it sees is late: a lagging member behind a slow peer link looks the
 * same to a client, and this needs no etcd membership change (see the class's file for the why).
 *
 * Guarantees: startSecondApiserver resolves once /readyz answers 200 (delay 0 until setLagMs);
 * stop() ends the process (SIGTERM, then SIGKILL), closes the link and every connection it holds,
 * and removes its kubeconfig; an interrupted bench (its cleanups) calls it too. It writes the same audit log as the first, so the judge sees its
 * writes; its own output goes to logs/kube-apiserver-2.log.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection, createServer, type Socket } from 'node:net';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { freePort, type ControlPlaneState } from '../../../testbed/controlplane/cluster.js';
import { httpOk, launch, terminate, waitFor } from '../../../testbed/controlplane/process.js';
import { onCleanup } from '../../bench/cleanup.js';

export interface LaggingLink {
  port: number;
  /** Etcd's answers reach the API server this much later from now on (0: at once; order is kept). */
  setLagMs(ms: number): void;
  lagMs(): number;
  close(): Promise<void>;
}

/** A TCP link to 127.0.0.1:target whose answers (target to client) are held back by the lag. */
export async function startLaggingLink(target: number): Promise<LaggingLink> {
  let lag = 0;
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  const server = createServer((client) => {
    const upstream = createConnection({ host: '127.0.0.1', port: target });
    for (const s of [client, upstream]) {
      sockets.add(s);
      s.once('close', () => sockets.delete(s));
      s.on('error', () => {
        client.destroy();
        upstream.destroy();
      });
    }
    client.pipe(upstream);
    // Each chunk goes on at its due time, never before an earlier one.
    let tail = 0;
    upstream.on('data', (chunk: Buffer) => {
      const due = Math.max(performance.now() + lag, tail);
      tail = due;
      const wait = due - performance.now();
      if (wait <= 0 && timers.size === 0) {
        client.write(chunk);
        return;
      }
      const t = setTimeout(
        () => {
          timers.delete(t);
          if (!client.destroyed) client.write(chunk);
        },
        Math.max(0, wait),
      );
      timers.add(t);
    });
    upstream.once('end', () => client.end());
    client.once('end', () => upstream.end());
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  return {
    port: (server.address() as { port: number }).port,
    setLagMs: (ms) => {
      lag = Math.max(0, ms);
    },
    lagMs: () => lag,
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const t of timers) clearTimeout(t);
      timers.clear();
      for (const s of sockets) s.destroy();
      await closed;
    },
  };
}

export interface SecondApiserver {
  server: string;
  /** The admin's kubeconfig, pointed at this API server. */
  kubeconfig: string;
  link: LaggingLink;
  stop(): Promise<void>;
}

const replaceFlag = (args: string[], flag: string, value: string): string[] => [
  ...args.filter((a) => !a.startsWith(`${flag}=`)),
  `${flag}=${value}`,
];

export async function startSecondApiserver(state: ControlPlaneState, log: (line: string) => void): Promise<SecondApiserver> {
  const spec = state.apiserver;
  if (!spec) throw new Error('the control plane state does not record how kube-apiserver was started: cannot start a second one');
  const started = Date.now();
  const link = await startLaggingLink(state.ports.etcd);
  const port = await freePort();
  const direct = `http://127.0.0.1:${state.ports.etcd}`;
  let args = replaceFlag(spec.args, '--secure-port', String(port));
  args = replaceFlag(args, '--etcd-servers', `http://127.0.0.1:${link.port}`);
  args = replaceFlag(args, '--etcd-servers-overrides', `coordination.k8s.io/leases#${direct}`);
  const proc = launch('kube-apiserver-2', spec.bin, args, state.dir, false);
  const server = `https://127.0.0.1:${port}`;
  const kubeconfig = join(state.dir, `apiserver-2-${port}.kubeconfig`);
  // An interrupted campaign stops it too (the runner's finally may never run).
  const unregister = onCleanup(() => stop());
  const stop = async (): Promise<void> => {
    unregister();
    await terminate(proc.pid, state.dir);
    await link.close();
    rmSync(kubeconfig, { force: true });
  };
  try {
    const admin = readFileSync(state.kubeconfig, 'utf8');
    writeFileSync(kubeconfig, admin.replace(/server: \S+/, `server: ${server}`), { mode: 0o600 });
    const field = (name: string): string => Buffer.from(new RegExp(`${name}: (\\S+)`).exec(admin)![1]!, 'base64').toString('utf8');
    const tls = { ca: field('certificate-authority-data'), cert: field('client-certificate-data'), key: field('client-key-data') };
    await waitFor('kube-apiserver-2', proc, port, () => httpOk(`${server}/readyz`, tls), 120_000);
  } catch (err) {
    await stop();
    throw err;
  }
  log(`control plane: a second kube-apiserver at ${server} (etcd through a lagging link) in ${Date.now() - started} ms`);
  return { server, kubeconfig, link, stop };
}
