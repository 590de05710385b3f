/**
 * The indexed object cache informers fill and controllers read: see store.ts for its guarantees.
 */
export {
  CONTROLLER_OWNER_INDEX,
  NAMESPACE_INDEX,
  Store,
  controllerOf,
  controllerOwnerKey,
  controllerOwnerIndexFunc,
  namespaceIndexFunc,
  objectKey,
  resourceVersionOf,
  type IndexFunc,
  type KubeObject,
  type OwnerReference,
  type ReadonlyStore,
  type ReplaceResult,
  type StoreOptions,
} from './store.js';
export { ReadYourWrites, compareResourceVersions, type ReadableCache } from './readyourwrites.js';
export type { EventHandler, EventSource } from './handler.js';
export type { ObjectCache } from './objectcache.js';
