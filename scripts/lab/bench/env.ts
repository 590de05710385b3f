/**
 * The benchmark environment: the control plane (reused or private, never with a node unless
 * asked), a bench RestClient (the operator's own transport, src/kube/rest.ts), the CRDs.
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import { loadKubeConfig } from '../../../src/kube/config.js';
import { RestClient } from '../../../src/kube/rest.js';
import { commandFromEnv } from '../../testbed/command-env.js';
import { acquireControlPlane, type ControlPlaneLease } from '../../testbed/controlplane/session.js';
import { readState } from '../../testbed/controlplane/cluster.js';
import { onCleanup } from './cleanup.js';
import { log } from './log.js';
import { clientNodeKubeConfigOnly } from '../../ship/bundle-clientnode.js';

export interface BenchEnv {
  lease: ControlPlaneLease;
  kubeconfig: string;
  kc: KubeConfig;
  /** The bench's client: the operator's RestClient, so both sides pay the same transport. */
  rest: RestClient;
  kubernetesVersion: string;
  /** Folder of a control plane started by our scripts (audit log, pids); undefined otherwise. */
  clusterDir: string | undefined;
  controlPlanePids: Record<string, number>;
  operator: OperatorCommand;
}

export interface OperatorCommand {
  argv: string[];
  kind: 'bundle' | 'source' | 'custom';
  describe: string;
}

export const BUNDLE_PATH = 'dist/bundle/echoperator.js';

/**
 * What runs the operator: ECHOPERATOR_CMD (a JSON array, as in the tests) if set; else the bundle
 * when it exists and is newer than every file in src/; else (missing or stale bundle) a
 * temporary esbuild bundle of the current src/, so the numbers are those of the code in the tree
 * and not inflated by tsx (~90 MB and seconds of start-up); `fromSource` runs src/ through tsx.
 */
export async function operatorCommand(opts: { fromSource?: boolean } = {}): Promise<OperatorCommand> {
  const argv = commandFromEnv('ECHOPERATOR_CMD');
  if (argv) return customCommand('ECHOPERATOR_CMD', argv);
  if (opts.fromSource) return sourceCommand();
  if (existsSync(BUNDLE_PATH)) {
    const stale = newerSources(statSync(BUNDLE_PATH).mtimeMs);
    if (stale.length === 0) return { argv: [process.execPath, bundleCopy()], kind: 'bundle', describe: `node ${BUNDLE_PATH}` };
    log(`${BUNDLE_PATH} is older than ${stale.length} file(s) in src/ (e.g. ${stale[0]}): bundling src/ into a temporary file instead`);
  }
  return temporaryBundle(existsSync(BUNDLE_PATH) ? `${BUNDLE_PATH} is older than src/` : `no ${BUNDLE_PATH}`);
}

/**
 * A copy of the bundle in a temporary folder (removed by the cleanup), which the benchmark runs:
 * a build while it runs (`npm test` rebuilds a bundle older than src/) replaces dist/ under it, and
 * an operator started meanwhile would find no file.
 */
function bundleCopy(): string {
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-bench-bundle-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const copy = join(dir, 'echoperator.cjs'); // the bundle is CommonJS; dist/bundle/package.json says so there
  copyFileSync(BUNDLE_PATH, copy);
  return copy;
}

/**
 * A command from an environment variable, described with the runtime it runs on: a section's
 * machine line names the bench's own Node, which is not the operator's when the command picks another.
 */
export function customCommand(variable: string, argv: string[]): OperatorCommand {
  const runtime = runtimeVersion(argv[0]!);
  return { argv, kind: 'custom', describe: `${variable}=${argv.join(' ')}${runtime ? ` (${runtime})` : ''}` };
}

/** What `<argv0> --version` prints when argv0 is a Node or Deno executable. */
function runtimeVersion(argv0: string): string | undefined {
  if (!/(^|\/)(node|deno)$/.test(argv0)) return undefined;
  const r = spawnSync(argv0, ['--version'], { encoding: 'utf8' });
  const first = r.status === 0 ? r.stdout.split('\n')[0]!.trim() : '';
  if (!first) return undefined;
  return first.startsWith('v') ? `Node ${first}` : first;
}

export function sourceCommand(): OperatorCommand {
  return {
    argv: [process.execPath, '--import', 'tsx', 'src/main.ts'],
    kind: 'source',
    describe: 'node --import tsx src/main.ts (from source)',
  };
}

/** An ESM bundle of src/main.ts in a temporary folder (removed by the cleanup), as `npm run build` makes one. */
export async function temporaryBundle(why: string): Promise<OperatorCommand> {
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-bench-bundle-'));
  onCleanup(() => rmSync(dir, { recursive: true, force: true }));
  const outfile = join(dir, 'echoperator.mjs');
  const esbuild = await import('esbuild');
  await esbuild.build({
    entryPoints: ['src/main.ts'],
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    minify: true,
    outfile,
    logLevel: 'error',
    // Guarded optional requires of client-node's dependencies: left out, as the build does.
    external: ['bufferutil', 'utf-8-validate', 'supports-color', 'encoding'],
    plugins: [clientNodeKubeConfigOnly],
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  return { argv: [process.execPath, outfile], kind: 'bundle', describe: `node <temporary esbuild bundle of src/> (${why})` };
}

/** Files under src/ changed after `mtimeMs` (a bundle built before them does not contain them). */
function newerSources(mtimeMs: number, dir = 'src'): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = statSync(p);
    if (st.isDirectory()) out.push(...newerSources(mtimeMs, p));
    else if (st.mtimeMs > mtimeMs) out.push(p);
  }
  return out;
}

/**
 * node: a private cluster gets a node (pods run; only namespaces made with `pods: true` use it).
 * Default false: thousands of Jobs, no node of ours, and no pods on one that `cluster:up` started.
 */
export async function openEnv(opts: { privateCluster: boolean; fromSource?: boolean; node?: boolean }): Promise<BenchEnv> {
  const lease = await acquireControlPlane({ private: opts.privateCluster, node: opts.node ?? false, needsNode: opts.node });
  onCleanup(() => lease.release());
  log(`control plane: ${lease.describe}`);
  const kc = loadKubeConfig(lease.kubeconfig);
  const rest = new RestClient(kc, { userAgent: 'echoperator-bench', maxSockets: 128 });
  const version = await rest.request<{ gitVersion?: string }>('GET', '/version');
  // Our control planes keep admin.kubeconfig in their folder, next to state.json and logs/.
  const dir = dirname(lease.kubeconfig);
  const state = readState(dir);
  return {
    lease,
    kubeconfig: lease.kubeconfig,
    kc,
    rest,
    kubernetesVersion: version.gitVersion ?? 'unknown',
    clusterDir: state ? dir : undefined,
    controlPlanePids: state
      ? { 'kube-apiserver': state.pids.kubeApiserver, etcd: state.pids.etcd, 'kube-controller-manager': state.pids.kubeControllerManager }
      : {},
    operator: await operatorCommand({ fromSource: opts.fromSource }),
  };
}
