/**
 * Before informers start: is the API server reachable, and are our CRDs installed? Each failure
 * is said once, clearly, with what to do, and retried with backoff until it clears or we stop.
 */
import { GROUP, VERSION } from '../api/group.js';
import { describeError, isForbidden, isNotFound, isUnauthorized } from '../kube/errors.js';
import type { RestClient } from '../kube/rest.js';
import type { Logger } from '../runtime/log.js';
import { Backoff } from '../runtime/backoff.js';
import type { Clock } from '../runtime/clock.js';

const REQUIRED = ['echos', 'scheduledechos'];

export function explainPreflightError(err: unknown, server: string): string {
  if (isNotFound(err)) {
    return `the CustomResourceDefinitions echos.${GROUP} and scheduledechos.${GROUP} are not installed in ${server}: install them with \`kubectl apply --server-side -f crds/\` (or apply the manifests from \`npm run synth\`)`;
  }
  if (isUnauthorized(err))
    return `the API server at ${server} rejected our credentials (401): check KUBECONFIG or the ServiceAccount token`;
  if (isForbidden(err)) return `not allowed to read the ${GROUP} API at ${server} (403): ${describeError(err)}`;
  return `cannot reach the API server at ${server}: ${describeError(err)}`;
}

export async function waitForApi(rest: RestClient, log: Logger, clock: Clock, signal: AbortSignal): Promise<void> {
  const backoff = new Backoff({ clock });
  let lastProblem = '';
  for (;;) {
    try {
      const list = await rest.request<{ resources?: { name: string }[] }>('GET', `/apis/${GROUP}/${VERSION}`, {
        signal,
        timeoutMs: 10_000,
      });
      const served = new Set((list.resources ?? []).map((r) => r.name));
      const missing = REQUIRED.filter((r) => !served.has(r));
      if (missing.length === 0) {
        if (lastProblem) log.info('API server reachable and CRDs installed; starting');
        return;
      }
      throw Object.assign(new Error(`missing ${missing.join(', ')}`), { code: 404 });
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      const problem = explainPreflightError(err, rest.server);
      if (problem !== lastProblem) log.error(`${problem}; retrying`, { error: describeError(err) });
      lastProblem = problem;
      await clock.sleep(backoff.next(), signal);
    }
  }
}
