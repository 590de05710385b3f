/**
 * Failover with two replicas (HA_ENABLED): how long from signalling the leader until the standby
 * holds the Lease, seen by a watch on the Lease's holderIdentity (timestamps on receipt).
 *
 *  - graceful: SIGTERM to the leader; it drains, releases the Lease (holderIdentity cleared) and
 *    the standby, woken by its own watch of the Lease, acquires it at once.
 *  - crash: SIGKILL to the leader; nothing is released, so the standby waits until it has seen the
 *    same renewTime for a whole leaseDuration (client-go's clock-skew-safe rule): bounded by
 *    leaseDuration + retryPeriod after the last renewal.
 * After each run the stopped leader is replaced by a fresh standby (ready before the next run).
 */
import { LEASES } from '../../../src/kube/resources.js';
import type { KubeObject } from '../../../src/runtime/cache/store.js';
import {
  createNamespace,
  deleteNamespace,
  log,
  median,
  minMax,
  now,
  secs,
  sleep,
  startOperator,
  table,
  waitReady,
  watch,
  type BenchEnv,
  type OperatorHandle,
} from './common.js';
import { loadLine, machine, provenance, type Section } from './report.js';

export interface FailoverOptions {
  runs: number;
}

interface LeaseSettings {
  label: string;
  duration: number;
  renew: number;
  retry: number;
}

const SETTINGS: LeaseSettings[] = [
  { label: 'default', duration: 15, renew: 10, retry: 2 },
  { label: 'short', duration: 4, renew: 3, retry: 1 },
];

const LEASE_NAME = 'echoperator';

type LeaseObj = KubeObject & { spec?: { holderIdentity?: string } };

interface Replica {
  id: string;
  op: OperatorHandle;
}

interface SettingResult {
  s: LeaseSettings;
  graceful: number[];
  released: number[];
  crash: number[];
}

async function measure(env: BenchEnv, s: LeaseSettings, runs: number): Promise<SettingResult> {
  const ns = await createNamespace(env, `bench-failover-${s.label}`);
  let holder: string | undefined;
  /** When the watch delivered the current holder. */
  let holderSince = now();
  let waiter: { pred: (h: string | undefined) => boolean; resolve: (at: number) => void } | undefined;
  const onLease = (l: LeaseObj, at: number): void => {
    const h = l.spec?.holderIdentity || undefined;
    if (h !== holder) holderSince = at;
    holder = h;
    if (waiter?.pred(holder)) {
      waiter.resolve(at);
      waiter = undefined;
    }
  };
  const leases = await watch<LeaseObj>(
    env,
    LEASES,
    ns,
    { onAdd: onLease, onUpdate: (_, l, at) => onLease(l, at) },
    { fieldSelector: `metadata.name=${LEASE_NAME}` },
  );
  const waitHolder = async (what: string, pred: (h: string | undefined) => boolean, timeoutMs: number): Promise<number> => {
    if (pred(holder)) return holderSince;
    const p = new Promise<number>((resolve) => (waiter = { pred, resolve }));
    const at = await Promise.race([p, sleep(timeoutMs).then(() => undefined)]);
    if (at === undefined)
      throw new Error(`failover (${s.label}): ${what} did not happen within ${secs(timeoutMs, 0)} (holder ${holder ?? 'none'})`);
    return at;
  };

  let seq = 0;
  const vars = {
    WATCH_NAMESPACES: ns,
    NAMESPACE: ns,
    HA_ENABLED: 'true',
    HA_LEASE_LOCK_NAME: LEASE_NAME,
    HA_LEASE_DURATION_SECONDS: String(s.duration),
    HA_RENEW_DEADLINE_SECONDS: String(s.renew),
    HA_RETRY_PERIOD_SECONDS: String(s.retry),
  };
  const start = async (): Promise<Replica> => {
    const id = `bench-${s.label}-${++seq}`;
    const op = await startOperator(env, { ...vars, HA_NODE_ID: id });
    await waitReady(op);
    return { id, op };
  };
  const replicas: Replica[] = [];
  const result: SettingResult = { s, graceful: [], released: [], crash: [] };
  const timeoutMs = (2 * s.duration + 2 * s.retry + 30) * 1000;
  try {
    replicas.push(await start(), await start());
    await waitHolder('first leader', (h) => replicas.some((r) => r.id === h), timeoutMs);
    for (const kind of ['graceful', 'crash'] as const) {
      for (let i = 0; i < runs; i++) {
        // Let the standby watch a few renewals, as it would in a long-running deployment.
        await sleep(Math.max(2000, 2 * s.retry * 1000));
        const leader = replicas.find((r) => r.id === holder);
        const standby = replicas.find((r) => r.id !== holder);
        if (!leader || !standby)
          throw new Error(`failover (${s.label}): holder ${holder} is not one of ${replicas.map((r) => r.id).join(', ')}`);
        let releasedAt: number | undefined;
        const t0 = now();
        leader.op.proc.kill(kind === 'graceful' ? 'SIGTERM' : 'SIGKILL');
        if (kind === 'graceful') releasedAt = await waitHolder('release', (h) => h !== leader.id, timeoutMs);
        const at = await waitHolder(`${standby.id} taking over`, (h) => h === standby.id, timeoutMs);
        const dt = at - t0;
        result[kind].push(dt);
        if (releasedAt !== undefined) result.released.push(releasedAt - t0);
        log(
          `  failover ${s.label} ${kind} ${i + 1}/${runs}: ${secs(dt)}${releasedAt !== undefined ? ` (released after ${secs(releasedAt - t0)})` : ''}`,
        );
        const code = await leader.op.exited;
        if (kind === 'graceful' && code !== 0) log(`  note: the old leader exited with ${code}`);
        replicas.splice(replicas.indexOf(leader), 1);
        replicas.push(await start());
      }
    }
    return result;
  } finally {
    for (const r of replicas) if (r.op.alive()) await r.op.stop('SIGKILL', 5000);
    await leases.stop();
    await deleteNamespace(env, ns, { wait: false });
  }
}

export async function failover(env: BenchEnv, opts: FailoverOptions): Promise<Section[]> {
  const m = machine(env);
  const load = loadLine();
  const results: SettingResult[] = [];
  for (const s of SETTINGS) {
    log(`failover: ${s.label} lease settings ${s.duration}/${s.renew}/${s.retry} s, ${opts.runs} runs each`);
    results.push(await measure(env, s, opts.runs));
  }
  const rows = results.flatMap((r) => [
    [
      `${r.s.label} (${r.s.duration}/${r.s.renew}/${r.s.retry})`,
      'graceful (SIGTERM)',
      `**${secs(median(r.graceful))}**`,
      minMax(r.graceful, (x) => secs(x)),
      `released after ${secs(median(r.released))}; without release a standby would wait up to ${r.s.duration + r.s.retry} s`,
    ],
    [
      `${r.s.label} (${r.s.duration}/${r.s.renew}/${r.s.retry})`,
      'crash (SIGKILL)',
      `**${secs(median(r.crash))}**`,
      minMax(r.crash, (x) => secs(x)),
      `bounded by leaseDuration + retryPeriod = ${r.s.duration + r.s.retry} s after the last renewal (>= ${r.s.duration - r.s.retry} s after the kill)`,
    ],
  ]);
  for (const r of results)
    log(`failover ${r.s.label}: graceful ${secs(median(r.graceful))}, crash ${secs(median(r.crash))} (lease ${r.s.duration} s)`);
  return [
    {
      id: 'failover',
      markdown: `## Failover

${provenance(env, m, `${opts.runs} runs per row. `, load)}

Two replicas (HA_ENABLED), lease settings leaseDuration/renewDeadline/retryPeriod in seconds. Time from signalling the
leader until a watch on the Lease sees the standby as holderIdentity; after each run the old leader is replaced by a
fresh standby.

${table(['lease settings', 'stop', 'median', 'min .. max', 'bound'], rows)}`,
    },
  ];
}
