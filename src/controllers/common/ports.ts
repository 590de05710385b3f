/**
 * What reconcilers need from the rest of the operator, as narrow interfaces: a read-only cache,
 * the typed client for writes (runtime/client) and the EventRecorder (runtime/events).
 * Reconcilers are tested through these.
 */
import type { Client } from '../../runtime/client/client.js';
import type { EventRecorder } from '../../runtime/events.js';
export type { ObjectCache } from '../../runtime/cache/index.js';
export type { Client };

/** What every reconciler factory is given beside its caches (see controllers/index.ts). */
export interface ReconcilerDeps {
  client: Client;
  events: EventRecorder;
  /** The image of the pods that print (JOB_IMAGE). */
  jobImage: string;
}
