/**
 * The three Lease calls the leader elector makes, over our keep-alive RestClient rather than
 * client-node's generated client (which opens a new TLS connection per call): renewals every
 * retry period must stay fast on a loaded API server, or a healthy leader misses its deadline.
 */
import type { V1Lease } from '@kubernetes/client-node';
import type { RestClient } from './rest.js';
import { LEASES, resourcePath } from './resources.js';

/** The calls of client-node's CoordinationV1Api the elector needs, each with the caller's signal. */
export interface LeaseApi {
  readNamespacedLease(p: { name: string; namespace: string; signal?: AbortSignal }): Promise<V1Lease>;
  createNamespacedLease(p: { namespace: string; body: V1Lease; signal?: AbortSignal }): Promise<V1Lease>;
  replaceNamespacedLease(p: { name: string; namespace: string; body: V1Lease; signal?: AbortSignal }): Promise<V1Lease>;
}

/** Each call is bounded by timeoutMs and by its signal; errors are ApiErrors (code 404, 409, ...). */
export function restLeaseApi(rest: RestClient, timeoutMs = 10_000): LeaseApi {
  return {
    readNamespacedLease: ({ name, namespace, signal }) =>
      rest.request<V1Lease>('GET', resourcePath(LEASES, namespace, name), { timeoutMs, signal }),
    createNamespacedLease: ({ namespace, body, signal }) =>
      rest.request<V1Lease>('POST', resourcePath(LEASES, namespace), { body, timeoutMs, signal }),
    replaceNamespacedLease: ({ name, namespace, body, signal }) =>
      rest.request<V1Lease>('PUT', resourcePath(LEASES, namespace, name), { body, timeoutMs, signal }),
  };
}
