/**
 * What reconcilers need from the rest of the operator, as narrow interfaces: a read-only cache
 * and the API for writes (Events go through runtime/events' EventRecorder). Reconcilers are
 * tested through these.
 */
import type { RequestOpts } from '../../kube/rest.js';
import type { EventRecorder } from '../../runtime/events.js';
export type { ObjectCache } from '../../runtime/cache/index.js';

export interface ApiWriter {
  request<T = unknown>(method: string, path: string, opts?: RequestOpts): Promise<T>;
}

/** What every reconciler factory is given beside its caches (see controllers/index.ts). */
export interface ReconcilerDeps {
  api: ApiWriter;
  events: EventRecorder;
  /** The image of the pods that print (JOB_IMAGE). */
  jobImage: string;
}
