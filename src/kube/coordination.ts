/**
 * The three Lease calls the leader elector makes, over our keep-alive RestClient rather than
 * client-node's generated client (which opens a new TLS connection per call): renewals every
 * retry period must stay fast on a loaded API server, or a healthy leader misses its deadline.
 */
import type { CoordinationV1Api, V1Lease } from '@kubernetes/client-node';
import type { RestClient } from './rest.js';
import { LEASES, resourcePath } from './resources.js';

export type LeaseApi = Pick<CoordinationV1Api, 'readNamespacedLease' | 'createNamespacedLease' | 'replaceNamespacedLease'>;

/** Each call is bounded by timeoutMs; errors are ApiErrors (code 404, 409, ...). */
export function restLeaseApi(rest: RestClient, timeoutMs = 10_000): LeaseApi {
  return {
    readNamespacedLease: ({ name, namespace }: { name: string; namespace: string }) =>
      rest.request<V1Lease>('GET', resourcePath(LEASES, namespace, name), { timeoutMs }),
    createNamespacedLease: ({ namespace, body }: { namespace: string; body: V1Lease }) =>
      rest.request<V1Lease>('POST', resourcePath(LEASES, namespace), { body, timeoutMs }),
    replaceNamespacedLease: ({ name, namespace, body }: { name: string; namespace: string; body: V1Lease }) =>
      rest.request<V1Lease>('PUT', resourcePath(LEASES, namespace, name), { body, timeoutMs }),
  };
}
