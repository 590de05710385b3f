/**
 * `npm test`: every test file under test/ with node's test runner, against one cluster for the
 * whole run (reused when `cluster:up` left one running, else started here and stopped after, also
 * on SIGINT/SIGTERM). Arguments narrow the run to matching files: `npm test -- workqueue`.
 *
 * Tiers: test/unit needs nothing; test/e2e needs the control plane; test/e2e/node-* also needs
 * the node (pods that run). With ECHOPERATOR_NODE=false the cluster has no node and the node tier
 * is left out, said so in the output. A cluster started here must leave nothing on the machine
 * once stopped (processes, mounts, namespaces, cgroups): what is there after the run and was not
 * before it fails the run.
 *
 * A run of only unit files runs them in one process (scripts/testbed/unit-process.ts); with end-to-end
 * files, every file gets a process of its own, as `node --test` does.
 *
 * The main run is on this Node: `npm test` starts this file on the main line's (the image's,
 * MAIN_NODE_LINE), through scripts/testbed/main-node.sh, which installs it when the machine's node
 * is of another major; started on another line, the run says so. The unit files of the run also
 * run on every other supported Node line (scripts/testbed/unit-lines.ts, TEST_NODE_LINES), one
 * line after another once the main run is done; the run fails if any line fails, and the runner's
 * summary is printed after them, so the run still ends with it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ADD_ON_BUILDS, unbuiltAddOnsFor } from './controlplane/addon-builds.js';
import { isAlive } from '../ship/gobuild.js';
import { wantNode } from './controlplane/cluster.js';
import { exitWithError } from '../ship/errors.js';
import { machineLeftovers } from './controlplane/node/node.js';
import { descendants, isZombie } from './controlplane/process.js';
import { acquireControlPlane } from './controlplane/session.js';
import { kubectlFor } from './kubectl.js';
import { MAIN_NODE_LINE, ensureBundle, nodeMajor } from '../ship/runtimes.js';
import { selectedLines, unitProcessArgs, unitTierOnLines } from './unit-lines.js';

function testFiles(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return testFiles(path);
      return name.endsWith('.test.ts') ? [path] : [];
    })
    .sort();
}

/** Deployments of the operator in the cluster (`kubectl get -o name`), '' when none. */
function installedOperators(kubeconfig: string): string {
  const r = kubectlFor(kubeconfig).run(['get', 'deployments', '-A', '-l', 'app.kubernetes.io/name=echoperator', '-o', 'name']);
  return r.code === 0 ? r.stdout.trim().split('\n').filter(Boolean).join(', ') : '';
}

async function main(): Promise<void> {
  const filters = process.argv.slice(2);
  let files = testFiles('test').filter((f) => filters.length === 0 || filters.some((p) => f.includes(p)));
  if (files.length === 0) throw new Error(`no test file matches ${filters.join(' ')}`);
  const needsNode = (f: string): boolean => relative('test', f).startsWith(join('e2e', 'node-'));
  if (!wantNode() && process.env.USE_EXISTING_CLUSTER !== 'true' && files.some(needsNode)) {
    console.error(`tests: ECHOPERATOR_NODE=false, so the node tier is not run: ${files.filter(needsNode).join(', ')}`);
    files = files.filter((f) => !needsNode(f));
    if (files.length === 0) throw new Error('every matching test file needs the node');
  }
  const isUnit = (f: string): boolean => relative('test', f).startsWith('unit');
  const needsCluster = files.some((f) => !isUnit(f));
  selectedLines(); // a bad TEST_NODE_LINES stops the run here, before a cluster starts
  if (nodeMajor(process.versions.node) !== nodeMajor(MAIN_NODE_LINE))
    console.error(
      `tests: the main run is on Node ${process.versions.node}, not the main line (Node ${MAIN_NODE_LINE}, the image's): \`npm test\` runs it there`,
    );
  const before = new Set(machineLeftovers());
  // On a signal: the test runner and every process under it, so that a stop reaches what the test
  // files started (an operator, a private control plane's etcd and kube-apiserver), which their
  // after hooks, skipped on a signal, would have stopped. Before the cluster is stopped; once, by
  // whichever handler of the signal runs first (the session's or this file's).
  const stop: { runner?: ChildProcess; stopped?: Promise<void> } = {};
  const stopRunner = (signal: NodeJS.Signals): Promise<void> => {
    const runner = stop.runner;
    if (!runner?.pid || runner.exitCode !== null || runner.signalCode !== null) return stop.stopped ?? Promise.resolve();
    return (stop.stopped ??= (() => {
      const pids = [runner.pid, ...descendants(runner.pid)];
      for (const pid of pids) signalProcess(pid, signal);
      return reap(pids);
    })());
  };
  let lease = needsCluster ? await acquireControlPlane({ needsNode: files.some(needsNode), beforeSignalExit: stopRunner }) : undefined;
  if (lease && !lease.ownedPids.length && process.env.USE_EXISTING_CLUSTER !== 'true' && installedOperators(lease.kubeconfig)) {
    // `npm run demo` leaves the operator installed, watching every namespace: it would reconcile the tests' Echos too.
    console.error(
      `tests: the running cluster has the operator installed (${installedOperators(lease.kubeconfig)}); using a private cluster instead`,
    );
    lease = await acquireControlPlane({ private: true, beforeSignalExit: stopRunner });
  }
  if (lease) console.error(`tests: using ${lease.describe}`);
  // End-to-end tests run the operator as it ships: the bundle, built from the current sources.
  const bundle = needsCluster && !process.env.ECHOPERATOR_CMD ? await ensureBundle() : undefined;
  // Add-ons not built yet (Flux, Argo CD's harness, prometheus-operator, Helm) build in the
  // background at the lowest priority while the files that need none run; the files that need one
  // go last and wait.
  const addOns = await unbuiltAddOnsFor(files);
  const waits = (f: string): boolean => addOns.some((name) => ADD_ON_BUILDS[name].neededBy(f));
  files = [...files.filter((f) => !waits(f)), ...files.filter(waits)];
  const builder = addOns.length
    ? spawn('nice', ['-n', '19', process.execPath, '--import', 'tsx', 'scripts/testbed/cluster.ts', 'build', ...addOns], {
        stdio: ['ignore', 'inherit', 'inherit'],
        detached: true, // its own process group, so that stopping it stops its go commands too
      })
    : undefined;
  const stopBuilder = (signal: NodeJS.Signals = 'SIGTERM'): void => {
    if (builder?.pid && builder.exitCode === null && builder.signalCode === null) process.kill(-builder.pid, signal);
  };
  const built = builder ? new Promise<number>((resolve) => builder.on('close', (c) => resolve(c ?? 1))) : Promise.resolve(0);
  // Only unit files: one process for them all (scripts/testbed/unit-process.ts). With end-to-end files, a
  // process per file, so that they run side by side (they wait on the cluster, not the CPU).
  const args = needsCluster
    ? ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 4}`, ...files]
    : unitProcessArgs(files);
  const child = spawn(process.execPath, args, {
    // stdout passes through here so that the runner's summary can be held back until the other
    // Node lines are done: whatever they print, the run ends with the runner's own summary.
    stdio: ['inherit', 'pipe', 'inherit'],
    env: {
      ...process.env,
      ...(lease ? { KUBECONFIG: lease.kubeconfig, ECHOPERATOR_TEST_CLUSTER: '1' } : {}),
      ...(bundle ? { ECHOPERATOR_TEST_BUNDLE: bundle } : {}),
    },
  });
  stop.runner = child;
  const summary = holdSummary(child.stdout);
  const stopLines = new AbortController();
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.on(s, () => {
      void stopRunner(s);
      stopBuilder(s);
      stopLines.abort();
    });
  let code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  await stop.stopped;
  // Done by now, unless the files that need it did not run.
  const unfinished = builder !== undefined && builder.exitCode === null && builder.signalCode === null;
  stopBuilder();
  if ((await built) !== 0 && !unfinished && !stopLines.signal.aborted) console.error(`tests: building ${addOns.join(', ')} failed (above)`);
  await lease?.release();
  if (lease?.ownedPids.length) {
    const left = machineLeftovers().filter((l) => !before.has(l));
    for (const l of left) console.error(`tests: the cluster left behind ${l}`);
    if (left.length) code ||= 1;
  }
  // After the main run, not beside it: the e2e tier's timing-sensitive cases keep the machine.
  // Run even when the main run failed (a plain `code ||= await ...` would skip it): both results count.
  if (files.some(isUnit) && !stopLines.signal.aborted) {
    const lines = await unitTierOnLines(files.filter(isUnit), stopLines.signal);
    code ||= lines;
  }
  process.stdout.write(await summary, () => process.exit(code));
}

/** How long what a stopped run started may take to exit on its signal before it is killed. */
const STOP_GRACE_MS = 30_000;

/**
 * Waits for the processes a signal was sent to (a kube-apiserver whose etcd is gone can take
 * minutes to shut down), then kills what is left.
 */
async function reap(pids: number[]): Promise<void> {
  const deadline = Date.now() + STOP_GRACE_MS;
  const running = (): number[] => pids.filter((pid) => isAlive(pid) && !isZombie(pid));
  while (running().length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
  for (const pid of running()) signalProcess(pid, 'SIGKILL');
}

function signalProcess(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch {
    /* gone */
  }
}

/**
 * Forwards the runner's output as it comes, except its summary (from the first `ℹ tests N` line
 * on), which it resolves to once the runner's output ends, for the caller to print last.
 */
function holdSummary(stdout: NodeJS.ReadableStream): Promise<string> {
  let pending = '';
  let held: string | undefined;
  stdout.setEncoding('utf8');
  stdout.on('data', (chunk: string) => {
    if (held !== undefined) {
      held += chunk;
      return;
    }
    const text = pending + chunk;
    const at = text.search(/^ℹ tests \d+$/m);
    if (at >= 0) {
      process.stdout.write(text.slice(0, at));
      held = text.slice(at);
      pending = '';
      return;
    }
    // A summary line may be split across chunks: keep the last, unfinished line back.
    const cut = text.lastIndexOf('\n') + 1;
    process.stdout.write(text.slice(0, cut));
    pending = text.slice(cut);
  });
  return new Promise((resolve) => stdout.on('end', () => resolve((held ?? '') + pending)));
}

main().catch(exitWithError);
