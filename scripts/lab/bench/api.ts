/**
 * API calls the benchmarks make: retried as a client would, namespaces that are deleted again.
 */
import { randomBytes } from 'node:crypto';
import { ApiError, isNotFound, isTransient } from '../../../src/kube/errors.js';
import { RestClient } from '../../../src/kube/rest.js';
import { NO_PODS_ANNOTATIONS } from '../../testbed/controlplane/network.js';
import { kubectlFor } from '../../testbed/kubectl.js';
import { onCleanup } from './cleanup.js';
import { type BenchEnv } from './env.js';
import { now, sleep, log } from './log.js';

/** Retries transient failures (429 from APF, 5xx, resets) so a benchmark is not lost to one. */
export async function withRetry<T>(fn: () => Promise<T>, attempts = 8): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (!isTransient(err) || i >= attempts) throw err;
      const after = err instanceof ApiError ? err.retryAfterSeconds : undefined;
      await sleep(after ? after * 1000 : 100 * 2 ** i);
    }
  }
}

export const BENCH_LABEL = 'echoperator.mmontes.io/bench';

/**
 * A fresh namespace, deleted by the cleanup if the benchmark does not delete it itself. Its pods
 * stay off any node unless `pods` (the user's latency needs them to run).
 */
export async function createNamespace(env: BenchEnv, prefix: string, opts: { pods?: boolean } = {}): Promise<string> {
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  await withRetry(() =>
    env.rest.request('POST', '/api/v1/namespaces', {
      body: {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { name, labels: { [BENCH_LABEL]: 'true' }, annotations: opts.pods ? {} : { ...NO_PODS_ANNOTATIONS } },
      },
    }),
  );
  const unregister = onCleanup(() => env.rest.request('DELETE', `/api/v1/namespaces/${name}`, { timeoutMs: 5000 }).catch(() => undefined));
  namespaceCleanups.set(name, unregister);
  return name;
}

const namespaceCleanups = new Map<string, () => void>();

/** Deletes the namespace and (by default) waits until it is gone, so the next run starts quiet. */
export async function deleteNamespace(env: BenchEnv, name: string, opts: { wait?: boolean; timeoutMs?: number } = {}): Promise<number> {
  const started = now();
  // Emptying it first makes the namespace controller's job trivial: left to itself it finds Pods
  // still terminating (the job controller's finalizers) and waits ~30 s (their grace period)
  // before it looks again; this way a namespace of N Jobs and Pods is gone in a few seconds.
  const purge = [
    ['/apis/batch/v1', 'jobs', { propagationPolicy: 'Background' }],
    ['/apis/batch/v1', 'cronjobs', { propagationPolicy: 'Background' }],
    ['/api/v1', 'pods', { gracePeriodSeconds: 0 }],
    ['/apis/mmontes.io/v1alpha1', 'echos', {}],
    ['/apis/mmontes.io/v1alpha1', 'scheduledechos', {}],
    ['/api/v1', 'events', {}],
  ] as const;
  await Promise.all(
    purge.map(([base, resource, body]) =>
      env.rest.request('DELETE', `${base}/namespaces/${name}/${resource}`, { body, timeoutMs: 120_000 }).catch(() => undefined),
    ),
  );
  try {
    await withRetry(() => env.rest.request('DELETE', `/api/v1/namespaces/${name}`, { body: { propagationPolicy: 'Background' } }));
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  if (opts.wait ?? true) {
    const deadline = started + (opts.timeoutMs ?? 600_000);
    for (;;) {
      try {
        await env.rest.request('GET', `/api/v1/namespaces/${name}`);
      } catch (err) {
        if (isNotFound(err)) break;
      }
      if (now() > deadline) {
        log(`namespace ${name} still terminating after ${Math.round((now() - started) / 1000)} s; going on`);
        break;
      }
      await sleep(500);
    }
  }
  namespaceCleanups.get(name)?.();
  namespaceCleanups.delete(name);
  return now() - started;
}

/** Server-side applies crds/ and waits until they are served (the tests do the same). */
export async function installCrds(env: BenchEnv): Promise<void> {
  await runKubectl(env, ['apply', '--server-side', '--force-conflicts', '--field-manager=echoperator-tests', '-f', 'crds/']);
  await runKubectl(env, ['wait', '--for=condition=Established', '--timeout=60s', 'crd/echos.mmontes.io', 'crd/scheduledechos.mmontes.io']);
}

const runKubectl = (env: BenchEnv, args: string[]): Promise<string> => kubectlFor(env.kubeconfig).okAsync(args);

/** GET of a non-JSON endpoint (the API server's /metrics): RestClient.stream hands us the lines. */
export async function getText(rest: RestClient, path: string, timeoutMs = 30_000): Promise<string> {
  const lines: string[] = [];
  await rest.stream(path, {}, AbortSignal.timeout(timeoutMs), (line) => lines.push(line));
  return lines.join('\n');
}
