/**
 * The etcd half of the restart class, and the one flag the campaign's kube-apiserver needs for
 * it. etcd is compacted at its current revision, physically (the history is gone from disk too,
 * as the API server's own periodic compaction leaves it), under the API server's watch. (The other half, restarting kube-apiserver, is scripts/testbed/controlplane's
 * restartApiserver: same port, etcd and certificates, so the proxies need nothing new.)
 *
 * Compaction goes through etcd's JSON gateway (POST /v3/kv/compaction on the client URL), which
 * every etcd 3.x serves by default: no etcdctl to build or find.
 */
import { killApiserver, restartApiserver, type ControlPlaneState } from '../../../testbed/controlplane/cluster.js';

/**
 * Job and CronJob watches served from etcd, not from kube-apiserver's watch cache (for a built-in
 * resource, a size of 0 is the one that means anything: it turns the cache off). A watch resumed
 * from a compacted resourceVersion then gets the 410 a cluster whose watch cache was overrun
 * gives; with the cache, the restart class's compaction reached no controller (issue 42).
 */
export const WATCH_CACHE_FLAG = '--watch-cache-sizes=jobs.batch#0,cronjobs.batch#0';

/**
 * Restarts the campaign's private kube-apiserver with WATCH_CACHE_FLAG, unless it runs with it
 * already; later restarts (the restart class) keep it, since they reuse state.apiserver.args.
 */
export async function serveJobWatchesFromEtcd(state: ControlPlaneState, log: (line: string) => void): Promise<void> {
  const spec = state.apiserver;
  if (!spec) throw new Error('the control plane state does not record how kube-apiserver was started: cannot add ' + WATCH_CACHE_FLAG);
  if (spec.args.includes(WATCH_CACHE_FLAG)) return;
  spec.args = [...spec.args, WATCH_CACHE_FLAG];
  log(`control plane: restarting kube-apiserver with ${WATCH_CACHE_FLAG}`);
  // SIGKILL: a graceful stop drains its watches first, which can outlast restartApiserver's wait.
  await killApiserver(state, 'SIGKILL');
  await restartApiserver(state, { log });
}

async function etcdCall<T>(state: ControlPlaneState, path: string, body: object): Promise<T> {
  const res = await fetch(`http://127.0.0.1:${state.ports.etcd}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`etcd ${path}: HTTP ${res.status}: ${text.slice(0, 300)}`);
  return JSON.parse(text) as T;
}

/** Compacts etcd at its current revision, physically; resolves with that revision. */
export async function compactEtcd(state: ControlPlaneState): Promise<number> {
  const status = await etcdCall<{ header?: { revision?: string } }>(state, '/v3/maintenance/status', {});
  const revision = Number(status.header?.revision);
  if (!Number.isInteger(revision) || revision < 1) throw new Error(`etcd status names no revision: ${JSON.stringify(status)}`);
  try {
    await etcdCall(state, '/v3/kv/compaction', { revision: String(revision), physical: true });
  } catch (err) {
    // Compacted at this revision already (the API server's own compaction, or a previous schedule).
    if (!/compacted/i.test(String(err))) throw err;
  }
  return revision;
}
