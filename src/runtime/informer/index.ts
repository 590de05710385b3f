/**
 * Informers: LIST + WATCH into an indexed cache, with handlers, resync and health state.
 * informer.ts states the guarantees, reflector.ts the list/watch loop, listwatch.ts the API calls.
 */
export {
  Informer,
  LAST_APPLIED_ANNOTATION,
  stripForCache,
  type EventHandler,
  type InformerOptions,
  type InformerState,
  type InformerStatus,
} from './informer.js';
export {
  DEFAULT_INACTIVITY_TIMEOUT_MS,
  DEFAULT_MIN_WATCH_TIMEOUT_SECONDS,
  DEFAULT_PAGE_SIZE,
  Reflector,
  WATCH_ERROR_REASONS,
  nopInformerMetrics,
  type InformerMetrics,
  type ReflectorOptions,
  type ReflectorSink,
  type ReflectorStatus,
  type WatchErrorReason,
} from './reflector.js';
export {
  kubeListerWatcher,
  watchEventError,
  type KubeListerWatcherOptions,
  type ListOptions,
  type ListResult,
  type ListerWatcher,
  type WatchEvent,
  type WatchOptions,
} from './listwatch.js';
export {
  MALFORMED_REASONS,
  endsWatch,
  malformedObject,
  malformedWatchEvent,
  type ExpectedType,
  type MalformedReason,
} from './malformed.js';
export { InformerSet, informerLiveness, type InformerSetOptions } from './informerset.js';
