/**
 * The "apiserver" liveness check: fails once the API server has answered nothing at all
 * (timeouts, refused connections, a proxy that accepts and never answers) for longer than a
 * bound while requests were made (kube/reachability.ts keeps the evidence). An HTTP error status
 * is an answer and never fails it.
 *
 * Why liveness, not readiness: when every request of this process gets no answer, the cause is
 * often state in the process itself (a tunnel or proxy connection gone silent, a stale DNS
 * answer, a wedged socket pool) that a restart clears; readiness would only take the pod out of
 * Services, which an operator does not serve. The bound (ManagerConfig.apiUnreachableTimeoutMs)
 * keeps an API server restart from getting every operator pod restarted too.
 */
import type { RestClient } from '../kube/rest.js';

export function apiServerLiveness(
  rest: Pick<RestClient, 'reachability' | 'server' | 'proxy'>,
  boundMs: number,
  shutdown: AbortSignal,
): true | string {
  if (shutdown.aborted) return true;
  const silentMs = rest.reachability.unreachableMs(boundMs);
  if (silentMs < boundMs) return true;
  const via = rest.proxy ? ` through proxy ${rest.proxy.host}` : '';
  return `no answer from the API server at ${rest.server}${via} for ${Math.round(silentMs / 1000)} s: ${rest.reachability.lastError}`;
}
