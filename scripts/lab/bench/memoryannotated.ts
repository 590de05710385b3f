/**
 * Memory with users' annotations (issue 20, item 5): the operator's resident set over N plain
 * Echos next to N Echos carrying K KiB of annotations each (each with its Job and status), in the
 * same run, a fresh operator process over each namespace, read once its queue has settled. The
 * goal: annotations the operator never reads cost it (almost) nothing, ratio <= 1.2.
 *
 * The objects are written first, by the bench (Echo POST, Job POST, status PATCH: what the
 * operator would write), with no operator running; then each operator starts over reconciled
 * objects, so its reading holds its caches, not a backlog. Annotations are random base64 (no
 * sharing between objects), in 4 values, within the API server's 256 KiB limit per object.
 */
import { randomBytes } from 'node:crypto';
import type { Echo } from '../../../src/api/echo.js';
import {
  createNamespace,
  deleteNamespace,
  log,
  mib,
  now,
  secs,
  startOperator,
  table,
  temporaryBundle,
  waitReady,
  type BenchEnv,
  type OperatorHandle,
} from './common.js';
import { fmt, read, settle, type Reading } from './memory.js';
import { loadLine, machine, provenance, type Section } from './report.js';
import { createReconciledEchos, echoBody } from './workload.js';

export interface AnnotatedMemoryOptions {
  n: number;
  /** Annotations per Echo, in KiB (keys and values, as the API server counts them). */
  kib: number;
  workers: number;
  createConcurrency: number;
}

/** The goal: annotated RSS / plain RSS. */
const MAX_RATIO = 1.2;
const VALUES = 4;

function annotatedBody(kib: number): (name: string) => Echo {
  return (name) => {
    const echo = echoBody(name);
    const annotations: Record<string, string> = {};
    for (let i = 0; i < VALUES; i++) {
      const key = `bench.echoperator.mmontes.io/blob-${i}`;
      const chars = Math.floor((kib * 1024) / VALUES) - key.length;
      annotations[key] = randomBytes(Math.ceil((chars * 3) / 4))
        .toString('base64')
        .slice(0, chars);
    }
    echo.metadata.annotations = annotations;
    return echo;
  };
}

interface Run {
  reading: Reading;
  readyMs: number;
  settled: boolean;
}

/** A fresh operator over the namespace's reconciled objects, read once its queue settled. */
async function freshReading(env: BenchEnv, ns: string, n: number, workers: number): Promise<Run> {
  let op: OperatorHandle | undefined;
  try {
    op = await startOperator(env, { WATCH_NAMESPACES: ns, NAMESPACE: ns, NUM_WORKERS: String(workers) });
    const { readyAt } = await waitReady(op, { timeoutMs: 300_000 });
    const settled = await settle(op, n, 300_000);
    if (!settled) log(`memory: warning: the operator over ${ns} did not settle within 5 minutes`);
    const reading = await read(op);
    await op.stop('SIGTERM');
    return { reading, readyMs: readyAt - op.spawnedAt, settled };
  } finally {
    if (op?.alive()) await op.stop('SIGKILL');
  }
}

export async function annotatedMemory(env: BenchEnv, opts: AnnotatedMemoryOptions): Promise<Section[]> {
  const m = machine(env);
  const load = loadLine();
  const { n, kib } = opts;
  const menv =
    env.operator.kind === 'source' ? { ...env, operator: await temporaryBundle('the memory benchmark runs a bundle, never tsx') } : env;
  const plainNs = await createNamespace(env, 'bench-mem-plain');
  const fatNs = await createNamespace(env, 'bench-mem-annotated');
  try {
    let t0 = now();
    await createReconciledEchos(env, plainNs, n, opts.createConcurrency, { suspend: true });
    const plainMs = now() - t0;
    t0 = now();
    await createReconciledEchos(env, fatNs, n, opts.createConcurrency, { suspend: true, body: annotatedBody(kib) });
    const fatMs = now() - t0;
    log(`memory: wrote ${n} plain Echos (+ Jobs, statuses) in ${secs(plainMs)}, ${n} with ${kib} KiB of annotations in ${secs(fatMs)}`);

    const plain = await freshReading(menv, plainNs, n, opts.workers);
    log(`memory: fresh process over ${n} plain Echos: ${mib(plain.reading.vmRss)} (VmRSS)`);
    const fat = await freshReading(menv, fatNs, n, opts.workers);
    log(`memory: fresh process over ${n} Echos with ${kib} KiB of annotations: ${mib(fat.reading.vmRss)} (VmRSS)`);

    const r = (fat.reading.vmRss ?? fat.reading.promRss) / (plain.reading.vmRss ?? plain.reading.promRss);
    const verdict = r <= MAX_RATIO ? `within the goal (<= ${MAX_RATIO})` : `**above the goal (<= ${MAX_RATIO})**`;
    const unsettled = [plain, fat].some((x) => !x.settled) ? ' One of the operators did not settle within 5 minutes: read anyway.' : '';
    return [
      {
        id: 'memory:annotations',
        markdown: `### Memory with ${kib} KiB of annotations on every Echo

${provenance(menv, m, '', load)}

${table(
  [
    'operator, fresh process over',
    'VmRSS',
    'process_resident_memory_bytes',
    'V8 heap used',
    'V8 heap total (young generation)',
    'ready after',
  ],
  [
    [`${n} Echos + ${n} Jobs`, ...fmt(plain.reading), secs(plain.readyMs)],
    [`${n} Echos with ${kib} KiB of annotations each + ${n} Jobs`, ...fmt(fat.reading), secs(fat.readyMs)],
  ],
)}

VmRSS with annotations / without: **${r.toFixed(2)}**, ${verdict}. The initial LIST carried ${((n * kib) / 1024).toFixed(0)} MiB of annotations (the Echos cache drops them:
src/controllers/common/cache.ts; LIST pages are decoded item by item: src/kube/listdecode.ts).
Objects written by the bench before each operator started (${secs(plainMs)} and ${secs(fatMs)}, ${opts.createConcurrency} requests in flight; Jobs suspended: no Pods);
read once the operator's queue had stayed empty for 5 s.${unsettled}`,
      },
    ];
  } finally {
    await deleteNamespace(env, plainNs, { timeoutMs: 300_000 });
    await deleteNamespace(env, fatNs, { timeoutMs: 300_000 });
  }
}
