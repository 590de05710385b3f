/**
 * The etcd half of the restart class: etcd compacted at its current revision, physically (the
 * history is gone from disk too, as the API server's own periodic compaction leaves it), under
 * the API server's watch. (The other half, restarting kube-apiserver, is scripts/testbed/controlplane's
 * restartApiserver: same port, etcd and certificates, so the proxies need nothing new.)
 *
 * Compaction goes through etcd's JSON gateway (POST /v3/kv/compaction on the client URL), which
 * every etcd 3.x serves by default: no etcdctl to build or find.
 */
import type { ControlPlaneState } from '../../../testbed/controlplane/cluster.js';

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
