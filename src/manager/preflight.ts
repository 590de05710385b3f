/**
 * Before informers start: is the API server reachable, and are the CRDs of the kinds the
 * controllers reconcile installed? Each failure is said once, clearly, with what to do, and
 * retried with backoff until it clears or `signal` aborts (a stop, or the start-up deadline:
 * see startup.ts, which names the last problem reported through onProblem).
 */
import { describeError, isForbidden, isNotFound, isUnauthorized } from '../kube/errors.js';
import type { RestClient } from '../kube/rest.js';
import { apiVersionOf, type ResourceType } from '../kube/resources.js';
import { Backoff } from '../runtime/backoff.js';
import type { Clock } from '../runtime/clock.js';
import type { Logger } from '../runtime/log.js';

/** `<plural>.<group>`: a custom resource's CRD name. */
const crdNameOf = (type: ResourceType): string => `${type.resource}.${type.group}`;

export function explainPreflightError(err: unknown, server: string, kinds: readonly ResourceType[]): string {
  if (isNotFound(err)) {
    const crds = kinds.map(crdNameOf).join(' and ');
    return `the CustomResourceDefinitions ${crds} are not installed in ${server}: install them with \`kubectl apply --server-side -f crds/\` (or apply the manifests from \`npm run synth\`)`;
  }
  if (isUnauthorized(err))
    return `the API server at ${server} rejected our credentials (401): check KUBECONFIG or the ServiceAccount token`;
  const apis = [...new Set(kinds.map(apiVersionOf))].join(', ');
  if (isForbidden(err)) return `not allowed to read the ${apis} API at ${server} (403): ${describeError(err)}`;
  return `cannot reach the API server at ${server}: ${describeError(err)}`;
}

/**
 * Resolves once every kind in `kinds` is served; the API's discovery is asked once per
 * group/version. onProblem hears each problem as it is found, also that of an attempt cut short
 * by `signal` when no attempt has finished before it.
 */
export async function waitForApi(
  rest: RestClient,
  kinds: readonly ResourceType[],
  log: Logger,
  clock: Clock,
  signal: AbortSignal,
  onProblem: (problem: string) => void = () => undefined,
): Promise<void> {
  const backoff = new Backoff({ clock });
  const byApi = new Map<string, ResourceType[]>();
  for (const k of kinds) byApi.set(apiVersionOf(k), [...(byApi.get(apiVersionOf(k)) ?? []), k]);
  let lastProblem = '';
  for (;;) {
    try {
      const missing: string[] = [];
      for (const [apiVersion, wanted] of byApi) {
        const path = wanted[0]!.group ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
        const list = await rest.request<{ resources?: { name: string }[] }>('GET', path, { signal, timeoutMs: 10_000 });
        const served = new Set((list.resources ?? []).map((r) => r.name));
        missing.push(...wanted.filter((k) => !served.has(k.resource)).map(crdNameOf));
      }
      if (missing.length === 0) {
        if (lastProblem) log.info('API server reachable and CRDs installed; starting');
        return;
      }
      throw Object.assign(new Error(`missing ${missing.join(', ')}`), { code: 404 });
    } catch (err) {
      const problem = explainPreflightError(err, rest.server, kinds);
      if (signal.aborted) {
        if (!lastProblem) onProblem(problem);
        throw signal.reason;
      }
      onProblem(problem);
      if (problem !== lastProblem) log.error(`${problem}; retrying`, { error: describeError(err) });
      lastProblem = problem;
      await clock.sleep(backoff.next(), signal);
    }
  }
}
