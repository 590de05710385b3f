/**
 * Startup: from spawning the process to its health port answering, to /readyz (caches synced),
 * to the first reconcile's effect (an Echo created before the start gets its Job, seen by a
 * watch), next to `node -e 0` and to `--help` (loading the code and parsing settings, no API).
 */
import { spawn } from 'node:child_process';
import type { V1Job } from '@kubernetes/client-node';
import { ECHOS } from '../../../src/api/echo.js';
import { JOBS, resourcePath } from '../../../src/kube/resources.js';
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
  withRetry,
  type BenchEnv,
} from './common.js';
import { loadLine, machine, provenance, type Section } from './report.js';
import { echoBody } from './workload.js';

export interface StartupOptions {
  runs: number;
}

function timeCommand(argv: string[]): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = now();
    const child = spawn(argv[0]!, argv.slice(1), { stdio: 'ignore', env: { ...process.env, KUBECONFIG: '' } });
    child.on('error', reject);
    child.on('exit', (code) => (code === 0 ? resolve(now() - t0) : reject(new Error(`${argv.join(' ')} exited with ${code}`))));
  });
}

export async function startup(env: BenchEnv, opts: StartupOptions): Promise<Section[]> {
  const m = machine(env);
  const load = loadLine();
  const ns = await createNamespace(env, 'bench-startup');
  const jobSeen = new Map<string, number>();
  const jobs = await watch<V1Job & KubeObject>(env, JOBS, ns, {
    onAdd: (j, at) => {
      const owner = j.metadata?.ownerReferences?.find((r) => r.controller)?.name;
      if (owner && !jobSeen.has(owner)) jobSeen.set(owner, at);
    },
  });
  const listening: number[] = [];
  const ready: number[] = [];
  const firstJob: number[] = [];
  const nodeBare: number[] = [];
  const help: number[] = [];
  try {
    for (let i = 0; i < opts.runs; i++) {
      const name = `startup-${i}`;
      await withRetry(() => env.rest.request('POST', resourcePath(ECHOS, ns), { body: echoBody(name) }));
      await sleep(1000);
      const op = await startOperator(env, { WATCH_NAMESPACES: ns, NAMESPACE: ns });
      try {
        const r = await waitReady(op, { intervalMs: 10 });
        const deadline = now() + 60_000;
        while (!jobSeen.has(name) && now() < deadline) await sleep(5);
        if (!jobSeen.has(name)) throw new Error(`startup: no Job for ${name} within 60 s:\n${op.tail()}`);
        listening.push(r.listeningAt - op.spawnedAt);
        ready.push(r.readyAt - op.spawnedAt);
        firstJob.push(jobSeen.get(name)! - op.spawnedAt);
        log(
          `  startup ${i + 1}/${opts.runs}: listening ${secs(listening.at(-1)!)}, ready ${secs(ready.at(-1)!)}, first Job ${secs(firstJob.at(-1)!)}`,
        );
      } finally {
        await op.stop('SIGTERM');
      }
      nodeBare.push(await timeCommand([process.execPath, '-e', '0']));
      help.push(await timeCommand([...env.operator.argv, '--help']));
    }
  } finally {
    await jobs.stop();
    await deleteNamespace(env, ns, { wait: false });
  }
  const row = (what: string, xs: number[]): string[] => [what, `**${secs(median(xs), 3)}**`, minMax(xs, (x) => secs(x, 3))];
  log(`startup: ready ${secs(median(ready), 3)}, first Job ${secs(median(firstJob), 3)}, node -e 0 ${secs(median(nodeBare), 3)}`);
  return [
    {
      id: 'startup',
      markdown: `## Startup

${provenance(env, m, `${opts.runs} runs. `, load)}

An Echo is created while no operator runs; then the operator is spawned. Times from spawn (median, min .. max):

${table(
  ['milestone', 'median', 'min .. max'],
  [
    row('`node -e 0` (exit)', nodeBare),
    row('operator `--help` (load the code, parse settings, exit)', help),
    row('operator: health port answers', listening),
    row('operator: /readyz 200 (caches synced)', ready),
    row("operator: the waiting Echo's Job seen by a watch (first reconcile)", firstJob),
  ],
)}`,
    },
  ];
}
