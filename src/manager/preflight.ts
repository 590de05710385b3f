/**
 * Before informers start: is the API server reachable, is it a Kubernetes release the
 * application supports, and are the CRDs of the kinds the controllers reconcile installed? Each
 * failure is said once, clearly, with what to do, and retried with backoff until it clears or
 * `signal` aborts (a stop, or the start-up deadline: see startup.ts, which names the last problem
 * reported through onProblem); a server older than the minimum is the exception: no retry can
 * cure it, so it ends the start at once (UnsupportedServerError).
 */
import { describeError, isForbidden, isNotFound, isUnauthorized } from '../kube/errors.js';
import type { RestClient } from '../kube/rest.js';
import { apiVersionOf, type ResourceType } from '../kube/resources.js';
import { Backoff } from '../runtime/backoff.js';
import type { Clock } from '../runtime/clock.js';
import type { Logger } from '../runtime/log.js';

/** A server older than the oldest Kubernetes minor the application supports. */
export class UnsupportedServerError extends Error {
  override readonly name = 'UnsupportedServerError';
}

/** What GET /version answers (apimachinery's version.Info), as far as it is read here. */
export interface ServerVersion {
  major?: string;
  minor?: string;
  gitVersion?: string;
}

/**
 * [major, minor] of a server, from major/minor (a distribution may write "31+"), else from
 * gitVersion (v1.31.2-eks-…); undefined when neither says.
 */
export function serverMinor(info: ServerVersion): [number, number] | undefined {
  const major = Number.parseInt(info.major ?? '', 10);
  const minor = Number.parseInt(info.minor ?? '', 10);
  if (Number.isInteger(major) && Number.isInteger(minor)) return [major, minor];
  const m = /^v(\d+)\.(\d+)/.exec(info.gitVersion ?? '');
  return m ? [Number(m[1]), Number(m[2])] : undefined;
}

/** Throws UnsupportedServerError when `info` is older than `minimum` ("1.31"); an unreadable version passes. */
export function checkServerVersion(info: ServerVersion, minimum: string, server: string): void {
  const have = serverMinor(info);
  const [major, minor] = minimum.split('.').map(Number) as [number, number];
  if (!have || have[0] > major || (have[0] === major && have[1] >= minor)) return;
  const version = info.gitVersion ?? `${have[0]}.${have[1]}`;
  throw new UnsupportedServerError(
    `the API server at ${server} runs Kubernetes ${version}, older than ${minimum}, the oldest this operator supports: upgrade the cluster to ${minimum} or newer`,
  );
}

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

export interface WaitForApiOptions {
  /** The oldest Kubernetes minor ("1.31") the server may run; undefined: any. */
  minimumKubernetes?: string;
  /** Hears each problem as it is found, also that of an attempt cut short by the signal when none finished before it. */
  onProblem?: (problem: string) => void;
}

/**
 * Resolves once the server's version is at least the minimum and every kind in `kinds` is
 * served; the API's discovery is asked once per group/version.
 */
export async function waitForApi(
  rest: RestClient,
  kinds: readonly ResourceType[],
  log: Logger,
  clock: Clock,
  signal: AbortSignal,
  options: WaitForApiOptions = {},
): Promise<void> {
  const onProblem = options.onProblem ?? (() => undefined);
  const minimum = options.minimumKubernetes;
  const backoff = new Backoff({ clock });
  const byApi = new Map<string, ResourceType[]>();
  for (const k of kinds) byApi.set(apiVersionOf(k), [...(byApi.get(apiVersionOf(k)) ?? []), k]);
  let lastProblem = '';
  for (;;) {
    try {
      // One round trip, not one per request: the version and each group's discovery at once.
      const version = minimum ? rest.request<ServerVersion>('GET', '/version', { signal, timeoutMs: 10_000 }) : undefined;
      const served = [...byApi].map(async ([apiVersion, wanted]) => {
        const path = wanted[0]!.group ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
        const list = await rest.request<{ resources?: { name: string }[] }>('GET', path, { signal, timeoutMs: 10_000 });
        const names = new Set((list.resources ?? []).map((r) => r.name));
        return wanted.filter((k) => !names.has(k.resource)).map(crdNameOf);
      });
      // Settled, not raced: an old server is said before anything else it answered.
      const [info, missingByApi] = await Promise.allSettled([version, Promise.all(served)]);
      if (info.status === 'rejected') throw info.reason;
      if (info.value && minimum) checkServerVersion(info.value, minimum, rest.server);
      if (missingByApi.status === 'rejected') throw missingByApi.reason;
      const missing = missingByApi.value.flat();
      if (missing.length === 0) {
        if (lastProblem) log.info('API server reachable and CRDs installed; starting');
        return;
      }
      throw Object.assign(new Error(`missing ${missing.join(', ')}`), { code: 404 });
    } catch (err) {
      if (err instanceof UnsupportedServerError) throw err;
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
