/**
 * What reconcilers need from the rest of the operator, as narrow interfaces: a read-only cache,
 * the API for writes, and an event sink. Reconcilers are tested through these.
 */
import type { RequestOpts } from '../../kube/rest.js';

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

export const CONTROLLER_OWNER_INDEX = 'controller-owner';

export interface ApiWriter {
  request<T = unknown>(method: string, path: string, opts?: RequestOpts): Promise<T>;
}

export interface EventObjectRef {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

export interface EventSink {
  recordEvent(object: EventObjectRef, type: 'Normal' | 'Warning', reason: string, message: string): void;
}

export const nopEventSink: EventSink = { recordEvent() {} };
