/**
 * Installing the CRDs and running the operator from source against the test control plane.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { TestContext } from 'node:test';
import { commandFromEnv } from '../../scripts/testbed/command-env.js';
import { freePort } from '../../scripts/testbed/controlplane/cluster.js';
import { crdName } from '../../src/api/crd.js';
import { CUSTOM_RESOURCES } from '../../src/controllers/index.js';
import { kubeconfig, kubectlOk, testNamespace } from './kube.js';

/** What `kubectl wait` names the operator's CRDs by: crd/echos.mmontes.io, ... */
export const CRDS: readonly string[] = CUSTOM_RESOURCES.map((k) => `crd/${crdName(k)}`);

let crdsInstalled = false;

/** Server-side applies crds/ (shared by every test; idempotent) and waits until they are served. */
export function installCrds(): void {
  if (crdsInstalled) return;
  kubectlOk(['apply', '--server-side', '--force-conflicts', '--field-manager=echoperator-tests', '-f', 'crds/']);
  kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', ...CRDS]);
  crdsInstalled = true;
}

/** Lease timing of a test's HA replicas, in seconds. */
export interface LeaseTiming {
  duration: number;
  renew: number;
  retry: number;
}

/** Short enough for quick takeovers, long enough that a loaded CI machine does not lose the lease. */
export const TEST_LEASE: LeaseTiming = { duration: 8, renew: 6, retry: 1 };

/** The settings of HA replica `id`, watching `namespace` and electing with a Lease there. */
export function haReplicaEnv(namespace: string, id: string, lease: LeaseTiming = TEST_LEASE): Record<string, string> {
  return {
    WATCH_NAMESPACES: namespace,
    NAMESPACE: namespace,
    HA_ENABLED: 'true',
    HA_NODE_ID: id,
    HA_LEASE_DURATION_SECONDS: String(lease.duration),
    HA_RENEW_DEADLINE_SECONDS: String(lease.renew),
    HA_RETRY_PERIOD_SECONDS: String(lease.retry),
  };
}

export interface OperatorProcess {
  proc: ChildProcess;
  /** Everything it logged so far (stdout and stderr). */
  output(): string;
  healthPort: number;
  metricsPort: number;
  /** Sends the signal and resolves with the exit code (or 128+n for a signal death). */
  stop(signal?: NodeJS.Signals): Promise<number>;
  exited: Promise<number>;
}

/**
 * The command that runs the operator: from source by default; ECHOPERATOR_CMD (a JSON array)
 * swaps in the bundle on Node or Deno, or the single executable, for the same tests.
 */
export function operatorCommand(): string[] {
  const custom = commandFromEnv('ECHOPERATOR_CMD');
  if (custom) return custom;
  // `npm test` builds the bundle once (seconds) instead of every process compiling the sources
  // (seconds each); either runs the same code.
  const bundle = process.env.ECHOPERATOR_TEST_BUNDLE;
  if (bundle) return [process.execPath, '--enable-source-maps', bundle];
  return [process.execPath, '--import', 'tsx', 'src/main.ts'];
}

/** A command given to startOperator: fixed, or made from the ports it chose (e.g. Deno's --allow-net). */
export type OperatorCommand = string[] | ((ports: { healthPort: number; metricsPort: number }) => string[]);

/**
 * Starts the operator against the test control plane; stopped (SIGKILL) when the test ends.
 * command: what runs it (default operatorCommand()), e.g. the bundle on Deno or the single executable.
 */
export async function startOperator(
  t: { after(fn: () => unknown): void },
  env: Record<string, string> = {},
  args: string[] = [],
  command?: OperatorCommand,
): Promise<OperatorProcess> {
  const healthPort = await freePort();
  const metricsPort = await freePort();
  const [cmd, ...base] = typeof command === 'function' ? command({ healthPort, metricsPort }) : (command ?? operatorCommand());
  const proc = spawn(cmd!, [...base, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      KUBECONFIG: kubeconfig(),
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'debug',
      HEALTH_PORT: String(healthPort),
      METRICS_PORT: String(metricsPort),
      // Scraped over plain HTTP from this machine (no TLS, no token); a test of the secure
      // endpoint sets it to false.
      METRICS_INSECURE_PLAIN_HTTP: 'true',
      ...env,
    },
  });
  let out = '';
  proc.stdout.on('data', (d) => (out += d));
  proc.stderr.on('data', (d) => (out += d));
  const exited = new Promise<number>((resolve) =>
    // 'close', not 'exit': by then everything the process wrote has been read.
    proc.on('close', (code, signal) => resolve(code ?? 128 + (signal === 'SIGKILL' ? 9 : signal === 'SIGTERM' ? 15 : 2))),
  );
  t.after(() => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGKILL');
  });
  return {
    proc,
    output: () => out,
    healthPort,
    metricsPort,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (proc.exitCode === null && proc.signalCode === null) proc.kill(signal);
      return exited;
    },
  };
}

/** Polls /readyz until the operator's caches are synced. */
export async function waitReady(op: OperatorProcess, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (op.proc.exitCode !== null) throw new Error(`operator exited (${op.proc.exitCode}) before it was ready:\n${op.output()}`);
    try {
      // Bounded: a probe server that accepts and never answers must not hold the wait past its deadline.
      const res = await fetch(`http://127.0.0.1:${op.healthPort}/readyz`, { signal: AbortSignal.timeout(5_000) });
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`operator not ready after ${timeoutMs} ms:\n${op.output().slice(-4000)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/**
 * Runs `step`; when it fails, its error also carries the operator's last output, so a run that
 * failed once (on a loaded machine, say) can be read afterwards instead of reproduced.
 */
export async function withOperatorOutput<T>(op: OperatorProcess, step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    throw new Error(`${message}\noperator output, last 6000 characters:\n${op.output().slice(-6000)}`, { cause: err });
  }
}

/** The CRDs installed, a namespace of the test's own (`prefix`) and a ready operator watching it, with `env` on top. */
export async function operatorIn(
  t: TestContext,
  prefix: string,
  env: Record<string, string> = {},
): Promise<{ ns: string; op: OperatorProcess }> {
  installCrds();
  const ns = testNamespace(t, prefix);
  const op = await startOperator(t, { WATCH_NAMESPACES: ns, NAMESPACE: ns, ...env });
  await waitReady(op);
  return { ns, op };
}
