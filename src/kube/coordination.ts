/**
 * The three Lease calls the leader elector makes, over our keep-alive RestClient rather than
 * client-node's generated client (which opens a new TLS connection per call): renewals every
 * retry period must stay fast on a loaded API server, or a healthy leader misses its deadline.
 */
import type { V1Lease } from '@kubernetes/client-node';
import type { RestClient } from './rest.js';
import { LEASES, resourcePath } from './resources.js';

/** What the caller gives each Lease call: its signal, and a hook run before each attempt is sent (RequestOpts.onSend). */
export interface LeaseCall {
  signal?: AbortSignal;
  onSend?: () => void;
}

/** The calls of client-node's CoordinationV1Api the elector needs. */
export interface LeaseApi {
  readNamespacedLease(p: { name: string; namespace: string } & LeaseCall): Promise<V1Lease>;
  createNamespacedLease(p: { namespace: string; body: V1Lease } & LeaseCall): Promise<V1Lease>;
  replaceNamespacedLease(p: { name: string; namespace: string; body: V1Lease } & LeaseCall): Promise<V1Lease>;
}

/** Each call is bounded by timeoutMs and by its signal; errors are ApiErrors (code 404, 409, ...). */
export function restLeaseApi(rest: RestClient, timeoutMs = 10_000): LeaseApi {
  return {
    readNamespacedLease: ({ name, namespace, signal, onSend }) =>
      rest.request<V1Lease>('GET', resourcePath(LEASES, namespace, name), { timeoutMs, signal, onSend }),
    createNamespacedLease: ({ namespace, body, signal, onSend }) =>
      rest.request<V1Lease>('POST', resourcePath(LEASES, namespace), { body, timeoutMs, signal, onSend }),
    replaceNamespacedLease: ({ name, namespace, body, signal, onSend }) =>
      rest.request<V1Lease>('PUT', resourcePath(LEASES, namespace, name), { body, timeoutMs, signal, onSend }),
  };
}
