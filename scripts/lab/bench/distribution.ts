/**
 * `npm run bench:dist [-- --runs N]`: what the distribution costs, printed as a table and written
 * into docs/benchmarks.md under "Distribution" (only that section, between its markers, is
 * replaced; the rest of the file is left as it is).
 *
 * - build times: the bundle (esbuild) and the single executable, both from scratch;
 * - sizes: the bundle raw and gzip -9, the single executable;
 * - `--version` start-up: whole-process wall time, median of N runs, each runtime interleaved with
 *   its empty baseline (A B A B ...) and reported as the median of the pairwise ratios, so a drift
 *   of the machine's speed cancels out: Node bundle vs `node -e 0`, Deno bundle vs `deno eval 0`,
 *   single executable vs `node -e 0`;
 * - start to first reconcile: a namespace already holds one Echo; from spawning the operator
 *   (watching only that namespace) until it logs "job created" (logged once the API server accepted
 *   the Job), median of N/4 runs, each paired with a `node -e 0` run just before it for the ratio. Needs a control plane (the one
 *   `cluster:up` left running, else a private one started for the run).
 */
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { cpus, loadavg } from 'node:os';
import { resolve } from 'node:path';
import { BUNDLE, ROOT, buildBundle, kib } from '../../ship/build.js';
import { SEA, buildSea } from '../../ship/build-sea.js';
import { acquireControlPlane } from '../../testbed/controlplane/session.js';
import { exitWithError } from '../../ship/errors.js';
import { kubectlFor } from '../../testbed/kubectl.js';
import { denoBinary, denoPermissions } from '../../ship/runtimes.js';
import { updateDoc } from './report.js';
import { median } from './stats.js';

const runsArg = process.argv.indexOf('--runs');
const RUNS = runsArg > 0 ? Number(process.argv[runsArg + 1]) : 20;
const DOC = resolve(ROOT, 'docs/benchmarks.md');

/** Wall time of one whole process, in ms (it must exit 0). */
function timeOnce(cmd: string[], env: NodeJS.ProcessEnv = process.env): number {
  const t0 = performance.now();
  const r = spawnSync(cmd[0]!, cmd.slice(1), { stdio: 'ignore', env });
  const ms = performance.now() - t0;
  if (r.status !== 0) throw new Error(`${cmd.join(' ')} exited ${r.status ?? r.signal}`);
  return ms;
}

/** A and its baseline B in turn, RUNS times after one warm-up each: medians and the median ratio. */
function paired(a: string[], b: string[]): { a: number; b: number; ratio: number } {
  timeOnce(a);
  timeOnce(b);
  const as: number[] = [];
  const bs: number[] = [];
  const ratios: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    as.push(timeOnce(a));
    bs.push(timeOnce(b));
    ratios.push(as[i]! / bs[i]!);
  }
  return { a: median(as), b: median(bs), ratio: median(ratios) };
}

const kubectl = (kubeconfig: string, args: string[], input?: string): void => void kubectlFor(kubeconfig).ok(args, { input });

/** Spawns the operator over a namespace holding one Echo; ms until it logs that it created the Job. */
async function firstReconcile(cmd: string[], kubeconfig: string): Promise<number> {
  const ns = `bench-dist-${randomBytes(3).toString('hex')}`;
  kubectl(kubeconfig, ['create', 'namespace', ns]);
  const echo = { apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', metadata: { name: 'first', namespace: ns }, spec: { message: 'first' } };
  kubectl(kubeconfig, ['apply', '-f', '-'], JSON.stringify(echo));
  try {
    const env = {
      ...process.env,
      KUBECONFIG: kubeconfig,
      WATCH_NAMESPACES: ns,
      NAMESPACE: ns,
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'info',
      METRICS_PORT: '0',
      HEALTH_PORT: '0',
    };
    const t0 = performance.now();
    const proc = spawn(cmd[0]!, cmd.slice(1), { stdio: ['ignore', 'ignore', 'pipe'], env });
    let log = '';
    const ms = await new Promise<number>((done, fail) => {
      const timer = setTimeout(() => fail(new Error(`no "job created" after 60 s:\n${log.slice(-2000)}`)), 60_000);
      proc.stderr.on('data', (d: Buffer) => {
        log += d.toString('utf8');
        if (log.includes('"msg":"job created"')) {
          clearTimeout(timer);
          done(performance.now() - t0);
        }
      });
      proc.on('exit', (code) => fail(new Error(`operator exited ${code}:\n${log.slice(-2000)}`)));
    });
    proc.kill('SIGTERM');
    await new Promise((r) => proc.once('close', r));
    return ms;
  } finally {
    kubectl(kubeconfig, ['delete', 'namespace', ns, '--wait=false']);
  }
}

async function main(): Promise<void> {
  const load = loadavg()[0]!.toFixed(1);
  const bundle = await buildBundle();
  const sea = buildSea({ force: true });
  const deno = denoBinary();
  const lease = await acquireControlPlane();
  const rows: [string, string][] = [];
  const ms = (x: number): string => `${x.toFixed(0)} ms`;
  try {
    kubectl(lease.kubeconfig, [
      'apply',
      '--server-side',
      '--force-conflicts',
      '--field-manager=echoperator-bench',
      '-f',
      resolve(ROOT, 'crds'),
    ]);
    const denoRun = [deno, 'run', ...denoPermissions({ read: [lease.kubeconfig] }), BUNDLE];
    const node = [process.execPath, BUNDLE];
    const nodeBase = [process.execPath, '-e', '0'];

    rows.push(['bundle build (esbuild, minified + source map)', `${(bundle.ms / 1000).toFixed(1)} s`]);
    rows.push(['single executable build (SEA blob + postject)', `${(sea.ms / 1000).toFixed(1)} s`]);
    rows.push(['bundle size, raw', `${bundle.bytes} B (${kib(bundle.bytes)})`]);
    rows.push(['bundle size, gzip -9', `${bundle.gzipBytes} B (${kib(bundle.gzipBytes)})`]);
    rows.push(['single executable size', `${sea.bytes} B (${kib(sea.bytes)})`]);

    console.error(`timing --version (${RUNS} runs each)...`);
    const nv = paired([...node, '--version'], nodeBase);
    const dv = paired([...denoRun, '--version'], [deno, 'eval', '0']);
    const sv = paired([SEA, '--version'], nodeBase);
    rows.push(['`node -e 0` / `deno eval 0` (baselines)', `${ms(nv.b)} / ${ms(dv.b)}`]);
    rows.push(['`--version`, bundle on Node', `${ms(nv.a)} = ${nv.ratio.toFixed(2)} x \`node -e 0\``]);
    rows.push(['`--version`, bundle on Deno', `${ms(dv.a)} = ${dv.ratio.toFixed(2)} x \`deno eval 0\``]);
    rows.push(['`--version`, single executable', `${ms(sv.a)} = ${sv.ratio.toFixed(2)} x \`node -e 0\``]);

    const reconcileRuns = Math.max(3, Math.round(RUNS / 4));
    console.error(`timing start to first reconcile (${reconcileRuns} runs each)...`);
    for (const [name, cmd] of [
      ['bundle on Node', node],
      ['bundle on Deno', denoRun],
      ['single executable', [SEA]],
      ['source (tsx), for reference', [process.execPath, '--import', 'tsx', resolve(ROOT, 'src/main.ts')]],
    ] as [string, string[]][]) {
      const times: number[] = [];
      const ratios: number[] = [];
      for (let i = 0; i < reconcileRuns; i++) {
        const base = timeOnce(nodeBase);
        times.push(await firstReconcile(cmd, lease.kubeconfig));
        ratios.push(times[i]! / base);
      }
      rows.push([`start to first reconcile, ${name}`, `${ms(median(times))} = ${median(ratios).toFixed(1)} x \`node -e 0\``]);
    }
  } finally {
    await lease.release();
  }

  const width = Math.max(...rows.map((r) => r[0].length));
  console.log(rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n'));
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  updateDoc(DOC, [
    {
      id: 'distribution',
      markdown: [
        '## Distribution',
        '',
        `From \`npm run bench:dist\` (scripts/lab/bench/distribution.ts), ${date}, ${cpus().length} cores (${cpus()[0]?.model.trim()}), ` +
          `Node ${process.version}, ${spawnSync(deno, ['--version'], { encoding: 'utf8' }).stdout.split('\n')[0]}. ` +
          `Whole-process wall times, medians of ${RUNS} runs (first reconcile: of ${Math.max(3, Math.round(RUNS / 4))}); ` +
          'ratios are medians of pairwise ratios against the baseline run in turn. The control plane runs on the same machine; ' +
          `load average at the start: ${load} (absolute times swing with load, ratios much less).`,
        '',
        '| what | figure |',
        '| --- | --- |',
        ...rows.map(([k, v]) => `| ${k} | ${v} |`),
      ].join('\n'),
    },
  ]);
  console.error(`written to ${DOC.slice(ROOT.length + 1)} (section "Distribution")`);
}

main().catch(exitWithError);
