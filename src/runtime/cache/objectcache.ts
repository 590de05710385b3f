/**
 * A reconciler's view of a cache: reads only, never the API server.
 */
import type { CONTROLLER_OWNER_INDEX } from './store.js';

export interface ObjectCache<T> {
  get(key: string): T | undefined;
  /** Objects in the value's namespace whose controller ownerReference has its UID (value: controllerOwnerKey). */
  byIndex(index: typeof CONTROLLER_OWNER_INDEX, value: string): T[];
  /**
   * Tells the cache about an object as a write of ours returned it, so get() never hands out an
   * older copy (read-your-writes, see readyourwrites.ts). Absent on a plain cache.
   */
  wrote?(obj: T): void;
}
