/**
 * What reconcilers need from the rest of the operator, as narrow interfaces: a read-only cache
 * and the API for writes (Events go through runtime/events' EventRecorder). Reconcilers are
 * tested through these.
 */
import type { RequestOpts } from '../../kube/rest.js';
import type { CONTROLLER_OWNER_INDEX } from '../../runtime/cache/index.js';

/** The reconciler's view of an informer's store: reads only, never the API server. */
export interface ObjectCache<T> {
  get(key: string): T | undefined;
  /** Objects whose controller ownerReference has this UID. */
  byIndex(index: typeof CONTROLLER_OWNER_INDEX, value: string): T[];
  /**
   * Tells the cache about an object as a write of ours returned it, so get() never hands out an
   * older copy (read-your-writes, see runtime/cache/readyourwrites.ts). Optional: a plain cache.
   */
  wrote?(obj: T): void;
}

export interface ApiWriter {
  request<T = unknown>(method: string, path: string, opts?: RequestOpts): Promise<T>;
}
