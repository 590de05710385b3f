/**
 * What the fault tests share: a private control plane (for tests that kill, restart, start late
 * or strip the API server, never the shared one other tests use), kubectl bound to any
 * kubeconfig, the operator's JSON log lines and /metrics samples, and bulk API calls.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, before } from 'node:test';
import { join } from 'node:path';
import type { V1Job } from '@kubernetes/client-node';
import {
  freePort,
  startControlPlane,
  stopControlPlane,
  type ControlPlaneState,
  type StartOptions,
} from '../../scripts/testbed/controlplane/cluster.js';
import { loadKubeConfig, RestClient, type RequestOpts } from '../../src/kube/index.js';
import { kubectlFor as kubectlForCluster, type Kubectl } from '../../scripts/testbed/kubectl.js';

export type { Kubectl } from '../../scripts/testbed/kubectl.js';
import { within } from './eventually.js';
import { KUBECTL_TIMEOUT_MS, type KubeList } from './kube.js';
import { CRDS, type OperatorProcess } from './operator.js';
import { metricSample, scrape } from './http.js';

/** kubectl against another kubeconfig than the test's own (a proxy's, a cluster a test starts). */
export const kubectlFor = (kubeconfig: string): Kubectl => kubectlForCluster(kubeconfig, { timeoutMs: KUBECTL_TIMEOUT_MS });

export interface PrivateControlPlane {
  state: ControlPlaneState;
  kubectl: Kubectl;
  /** Server-side applies crds/ and waits until they are served. */
  installCrds(): void;
  stop(): Promise<void>;
}

/** A control plane of the test's own, in a fresh temporary folder; stop() it in an after hook. */
export async function startPrivateControlPlane(opts: Omit<StartOptions, 'dir' | 'detached' | 'log'> = {}): Promise<PrivateControlPlane> {
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-fault-cp-'));
  // A port below the ephemeral range: fault tests restart kube-apiserver on it, and meanwhile an
  // outgoing connection must not be given it as its local port.
  const apiserverPort = opts.apiserverPort ?? (await freePort());
  const state = await startControlPlane({ ...opts, apiserverPort, dir, detached: false, log: () => undefined });
  const kubectl = kubectlFor(state.kubeconfig);
  let stopped: Promise<void> | undefined;
  return {
    state,
    kubectl,
    installCrds: () => installCrdsWith(kubectl),
    stop: () => (stopped ??= stopControlPlane(state)),
  };
}

/**
 * One private control plane, with the CRDs installed, for every test of the calling file: started
 * in a before hook, stopped in an after hook. The returned function gives it to a test.
 */
export function privateControlPlanePerFile(): () => PrivateControlPlane {
  let cp: PrivateControlPlane | undefined;
  before(async () => {
    cp = await startPrivateControlPlane();
    cp.installCrds();
  });
  after(async () => {
    await cp?.stop();
  });
  return () => {
    if (!cp) throw new Error('the private control plane is not running (started in a before hook)');
    return cp;
  };
}

export function installCrdsWith(kubectl: Kubectl): void {
  kubectl.ok(['apply', '--server-side', '--force-conflicts', '--field-manager=echoperator-tests', '-f', 'crds/']);
  kubectl.ok(['wait', '--for=condition=Established', '--timeout=60s', ...CRDS]);
}

export function echoManifest(name: string, message: string, labels?: Record<string, string>): string {
  return JSON.stringify({
    apiVersion: 'mmontes.io/v1alpha1',
    kind: 'Echo',
    metadata: { name, ...(labels ? { labels } : {}) },
    spec: { message },
  });
}

/** Echos named `names` as one List, for a single create or apply. */
export function echoListManifest(names: readonly string[], message: (name: string) => string): string {
  const items = names.map((n) => JSON.parse(echoManifest(n, message(n))) as unknown);
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
}

/**
 * One line of the operator's JSON log: ts, level and msg, then the fields of the call; the ones
 * the tests read are strings where the operator logs them (a Job's or an object's name, an
 * informer's, an error's message).
 */
export interface LogEntry {
  ts: string;
  level: string;
  msg: string;
  job?: string;
  name?: string;
  informer?: string;
  error?: string;
  [field: string]: unknown;
}

/**
 * The operator's JSON log entries so far (lines that are not JSON are skipped), everything it
 * logged before the call included: the tests' kubectl calls are synchronous and block the event
 * loop, so what the operator wrote meanwhile may still sit unread in its stderr pipe (logRead).
 */
export async function logEntries(op: OperatorProcess): Promise<LogEntry[]> {
  await logRead(op);
  return op
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .flatMap((l) => {
      try {
        return [JSON.parse(l) as LogEntry];
      } catch {
        return [];
      }
    });
}

/** How long an operator whose probe server stopped answering may take to exit (its graceful shutdown). */
const SHUTDOWN_MS = 15_000;

/**
 * Resolves once every line the operator logged before the call is in op.output(). Its logger
 * writes the lines of an event-loop turn at that turn's end, synchronously (CoalescingStream),
 * and an answer to a request received after a reply already came is written in a later turn
 * than the reply: so once two /healthz requests, one after the other, are answered, every line
 * logged before the first was in the pipe before the second answer left, and this process reads
 * pipe and socket in the same poll phase (or the pipe earlier): one setImmediate later it is
 * read. An operator that exited: its output is complete once it closed ('close' resolves exited).
 */
async function logRead(op: OperatorProcess): Promise<void> {
  const exited = (): boolean => op.proc.exitCode !== null || op.proc.signalCode !== null;
  for (let answers = 0; answers < 2;) {
    if (exited()) {
      await within('the exited operator to close its output', op.exited, 10_000);
      return;
    }
    try {
      const res = await fetch(`http://127.0.0.1:${op.healthPort}/healthz`, { signal: AbortSignal.timeout(10_000) });
      await res.arrayBuffer();
      answers++;
    } catch (err) {
      // One that exited meanwhile is read to its end above. One shutting down closes its probe
      // server before it exits: give it the time a shutdown takes. One still running must answer.
      await within('the operator to exit', op.exited, SHUTDOWN_MS).catch(() => {
        throw new Error(
          `the operator's probe server did not answer, so its log cannot be known to be read: ${String(err)}; its last output:\n` +
            op.output().split('\n').slice(-20).join('\n'),
        );
      });
    }
  }
  await new Promise((r) => setImmediate(r));
}

/** The value of one sample on the operator's /metrics (undefined when absent). */
export async function metricValue(op: OperatorProcess, name: string, labels: Record<string, string> = {}): Promise<number | undefined> {
  const text = await scrape(op.metricsPort);
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== name) continue;
    const have = new Map([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((p) => [p[1], p[2]]));
    if (Object.entries(labels).every(([k, v]) => have.get(k) === v)) return Number(m[3]);
  }
  return undefined;
}

/**
 * The operator's API requests so far that ended with `code` (every method): '<error>' counts those
 * that got no answer (client-go's label), '404' those refused as not found. A test reads the
 * operator's retries from it, which its log says only once.
 */
export async function requestsEndedWith(op: OperatorProcess, code: string): Promise<number> {
  return metricSample(await scrape(op.metricsPort), 'rest_client_requests_total', { code });
}

/**
 * One scrape of a controller's work: its reconciles so far, whether no key is queued or in flight,
 * how many keys wait out a delay (a retry's backoff, a requeue-after: not in `idle`), and the whole
 * text. Idle with none delayed means no reconcile is due until the next event.
 */
export async function controllerWork(
  op: OperatorProcess,
  controller: string,
): Promise<{ reconciles: number; idle: boolean; delayed: number; text: string }> {
  const text = await scrape(op.metricsPort);
  return {
    reconciles: metricSample(text, 'controller_runtime_reconcile_total', { controller }),
    idle:
      metricSample(text, 'workqueue_depth', { name: controller }) === 0 &&
      metricSample(text, 'controller_runtime_active_workers', { controller }) === 0,
    // NaN if the series is missing, so that a wait for 0 cannot pass on an operator without it.
    delayed: text.includes(`workqueue_delayed_depth{name="${controller}"}`)
      ? metricSample(text, 'workqueue_delayed_depth', { name: controller })
      : NaN,
    text,
  };
}

/** A RestClient for bulk calls (kubectl per object is too slow for hundreds); closed at test end. */
export function restClient(t: { after(fn: () => unknown): void }, kubeconfig: string): RestClient {
  const rest = new RestClient(loadKubeConfig(kubeconfig), { userAgent: 'echoperator-fault-tests' });
  t.after(() => rest.close());
  return rest;
}

/** The items of the collection at `path` (a GET through the RestClient), as the API-server type the caller names. */
export async function restItems<T>(rest: RestClient, path: string, opts: RequestOpts = {}): Promise<T[]> {
  return (await rest.request<KubeList<T>>('GET', path, opts)).items;
}

/** Runs fn over items, at most `width` at a time. */
export async function pool<T>(items: T[], width: number, fn: (item: T, index: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(width, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        await fn(items[i]!, i);
      }
    }),
  );
}

/** Jobs that are not being deleted, grouped by the Echo that owns them (by owner uid). */
export function liveJobsByOwner(jobs: V1Job[]): Map<string, V1Job[]> {
  const byOwner = new Map<string, V1Job[]>();
  for (const job of jobs) {
    if (job.metadata!.deletionTimestamp) continue;
    const owner = job.metadata!.ownerReferences?.find((r) => r.controller)?.uid ?? '(none)';
    byOwner.set(owner, [...(byOwner.get(owner) ?? []), job]);
  }
  return byOwner;
}

/**
 * The message a Job prints: printf's argument as the kubelet hands it over. The operator doubles
 * every `$` so that the kubelet's `$$` -> `$` gives the message back (src/controllers/common/kubeletescape.ts).
 */
export const messageOf = (job: V1Job): string | undefined => job.spec!.template.spec!.containers[0]!.command![2]?.replaceAll('$$', '$');

/** printf's argument for `message` as the operator must write it: every `$` doubled, so the kubelet expands nothing. */
export const kubeletEscaped = (message: string): string => message.split('$').join('$$');
