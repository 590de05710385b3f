/**
 * Informer: an indexed cache of one resource kept current by a Reflector (LIST + WATCH), with
 * event handlers that wake controllers; client-go's SharedIndexInformer, written for this runtime.
 *
 * Hand-written because @kubernetes/client-node's informer stops for good on any error other
 * than 410 (its caller must notice and restart it), never asks for watch bookmarks, does not
 * paginate its LIST, has no resync, and has no way to tell a health check that it died.
 *
 * Guarantees:
 *  - While run() runs, the informer never gives up: API errors are retried with backoff,
 *    410 Gone re-lists, silent watches are re-opened (see reflector.ts). run() resolves only
 *    when its signal aborts (state 'stopped'); if a bug throws in the transform, an indexer or the
 *    store, run() rejects with it and state is 'failed', for health checks to report.
 *  - Handlers see a consistent story per key: onAdd first, then onUpdate(old, new) with the
 *    previously delivered version as old, then at most one onDelete, after which the key may be
 *    added again. onDelete gets the object's final state (the watch's DELETED object, or after
 *    a re-list the last version known). onUpdate is skipped when the resourceVersion did not
 *    change, except on resync, which delivers onUpdate(obj, obj) for every cached object.
 *  - Handlers run synchronously, in order, after the store already reflects the change: a
 *    handler that reads the store sees at least that version. They must be quick (enqueue a
 *    key, nothing more); a handler that throws is logged and the others still run.
 *  - hasSynced() turns true once the first complete list is stored and its onAdds delivered,
 *    and stays true through re-lists.
 *  - A handler added while the informer runs first gets onAdd for every object cached then.
 *  - When run() settles, every timer (resync, watchdog, backoff) and request is released.
 *
 * Memory: the default transform (stripForCache) drops metadata.managedFields and the
 * last-applied-configuration annotation, often half of an object's size, before storing.
 */
import { describeError } from '../../kube/errors.js';
import { nopLogger, type Logger } from '../log.js';
import { realClock, type Clock, type Timer } from '../clock.js';
import type { EventHandler } from '../cache/handler.js';
import { objectKey, resourceVersionOf, Store, type IndexFunc, type KubeObject, type ReadonlyStore } from '../cache/store.js';
import type { ListerWatcher } from './listwatch.js';
import { Reflector, type ReflectorOptions, type ReflectorSink, type ReflectorStatus } from './reflector.js';

export type { EventHandler };

/** idle -> running -> stopped (signal aborted) | failed (a bug threw); never back. */
export type InformerState = 'idle' | 'running' | 'stopped' | 'failed';

export interface InformerStatus extends ReflectorStatus {
  state: InformerState;
  synced: boolean;
  /** Objects in the cache. */
  objects: number;
}

export interface InformerOptions<T> extends ReflectorOptions<T> {
  /** Where objects come from: kubeListerWatcher(rest, type, ...) or a fake in tests. */
  listerWatcher: ListerWatcher<T>;
  /** For logs and errors; e.g. the resource ("jobs"). */
  name?: string;
  /** Re-deliver onUpdate(obj, obj) for every cached object this often; 0/undefined = never. */
  resyncPeriodMs?: number;
  /** Added to the store's built-in namespace and controller-owner indexers. */
  indexers?: Record<string, IndexFunc<T>>;
  /** Default stripForCache; pass (obj) => obj to keep objects whole. */
  transform?: (obj: T) => T;
}

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * The default transform, like controller-runtime's cache transforms: drops managedFields and the
 * last-applied-configuration annotation, which no controller reads. Replaces obj.metadata in
 * place (the informer owns what it just parsed) with a fresh object rather than `delete`-ing
 * keys, which would switch V8 objects to the slower, larger dictionary representation.
 */
export function stripForCache<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata;
  if (!meta) return obj;
  const lastApplied = meta.annotations !== undefined && LAST_APPLIED_ANNOTATION in meta.annotations;
  if (meta.managedFields === undefined && !lastApplied) return obj;
  const { managedFields: _dropped, annotations, ...rest } = meta;
  let kept = annotations;
  if (annotations && lastApplied) {
    const { [LAST_APPLIED_ANNOTATION]: _alsoDropped, ...others } = annotations;
    kept = Object.keys(others).length > 0 ? others : undefined;
  }
  (obj as KubeObject).metadata = kept ? { ...rest, annotations: kept } : rest;
  return obj;
}

export class Informer<T extends KubeObject> {
  readonly name: string;
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly resyncPeriodMs: number;
  private readonly cache: Store<T>;
  private readonly reflector: Reflector<T>;
  /** Replaced, never mutated, on add/remove: a delivery loop iterates the array it started with. */
  private handlers: readonly EventHandler<T>[] = [];
  private currentState: InformerState = 'idle';
  private synced = false;
  /** Callers of waitForSync; all settled at sync (true) or when run() ends (false). */
  private readonly syncWaiters = new Set<(synced: boolean) => void>();
  private failure: string | undefined;

  constructor(options: InformerOptions<T>) {
    this.name = options.name ?? 'informer';
    this.clock = options.clock ?? realClock;
    this.logger = (options.logger ?? nopLogger).child({ informer: this.name });
    this.resyncPeriodMs = options.resyncPeriodMs ?? 0;
    if (!(this.resyncPeriodMs >= 0)) throw new RangeError(`Informer ${this.name}: resyncPeriodMs must be >= 0, got ${this.resyncPeriodMs}`);
    this.cache = new Store<T>({ indexers: options.indexers });
    const sink: ReflectorSink<T> = {
      replace: (items, resourceVersion) => this.onReplace(items, resourceVersion),
      apply: (type, obj) => this.onApply(type, obj),
    };
    this.reflector = new Reflector<T>(options.listerWatcher, sink, {
      ...options,
      clock: this.clock,
      logger: this.logger,
      transform: options.transform ?? stripForCache,
    });
  }

  /** The cache, read-only: controllers read it, only the informer writes it. */
  get store(): ReadonlyStore<T> {
    return this.cache;
  }

  get state(): InformerState {
    return this.currentState;
  }

  get status(): InformerStatus {
    const reflector = this.reflector.status;
    return {
      ...reflector,
      lastError: this.failure ?? reflector.lastError,
      state: this.currentState,
      synced: this.synced,
      objects: this.cache.size,
    };
  }

  /** Registers handlers; returns a function that unregisters them. See the guarantees above. */
  addEventHandler(handler: EventHandler<T>): () => void {
    this.handlers = [...this.handlers, handler];
    if (handler.onAdd) for (const obj of this.cache.list()) this.call('onAdd', () => handler.onAdd!(obj, true));
    return () => {
      this.handlers = this.handlers.filter((h) => h !== handler);
    };
  }

  hasSynced(): boolean {
    return this.synced;
  }

  /** true once synced; false if signal aborts or the informer stops first. */
  waitForSync(signal?: AbortSignal): Promise<boolean> {
    if (this.synced) return Promise.resolve(true);
    if (signal?.aborted || this.currentState === 'stopped' || this.currentState === 'failed') return Promise.resolve(false);
    return new Promise((resolve) => {
      const onAbort = (): void => settle(false);
      const settle = (synced: boolean): void => {
        this.syncWaiters.delete(settle);
        signal?.removeEventListener('abort', onAbort);
        resolve(synced);
      };
      this.syncWaiters.add(settle);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Lists, watches and serves the cache until signal aborts. Call once. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.currentState !== 'idle') throw new Error(`Informer ${this.name}: run() called again (state ${this.currentState})`);
    this.currentState = 'running';
    let resyncTimer: Timer | undefined;
    const armResync = (): void => {
      resyncTimer = this.clock.setTimer(this.resyncPeriodMs, () => {
        this.resync();
        armResync();
      });
    };
    if (this.resyncPeriodMs > 0) armResync();
    this.logger.debug('starting');
    try {
      await this.reflector.run(signal);
      this.currentState = 'stopped';
    } catch (err) {
      this.currentState = 'failed';
      this.failure = describeError(err);
      this.logger.error('informer failed; its cache is no longer kept up to date', { error: this.failure });
      throw err;
    } finally {
      resyncTimer?.cancel();
      for (const settle of [...this.syncWaiters]) settle(false);
    }
  }

  private onReplace(items: T[], resourceVersion: string): void {
    const { added, updated, deleted } = this.cache.replace(items, resourceVersion);
    const handlers = this.handlers;
    // Before the first sync, what the LIST finds is the initial list; after it (a re-list), an
    // object the cache did not have was created while the watch was down: news.
    const initial = !this.synced;
    for (const obj of added) for (const h of handlers) if (h.onAdd) this.call('onAdd', () => h.onAdd!(obj, initial));
    for (const { oldObj, newObj } of updated)
      for (const h of handlers) if (h.onUpdate) this.call('onUpdate', () => h.onUpdate!(oldObj, newObj));
    for (const obj of deleted) for (const h of handlers) if (h.onDelete) this.call('onDelete', () => h.onDelete!(obj));
    if (!this.synced) {
      this.synced = true;
      this.logger.info('synced', { objects: this.cache.size, resourceVersion });
      for (const settle of [...this.syncWaiters]) settle(true);
    }
  }

  private onApply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void {
    const handlers = this.handlers;
    if (type === 'DELETED') {
      // An object never delivered needs no onDelete: every onDelete follows an onAdd.
      if (this.cache.delete(obj) === undefined) return;
      for (const h of handlers) if (h.onDelete) this.call('onDelete', () => h.onDelete!(obj));
      return;
    }
    const old = this.cache.get(objectKey(obj));
    const rv = resourceVersionOf(obj);
    if (old !== undefined && rv !== undefined && resourceVersionOf(old) === rv) return;
    this.cache.add(obj);
    if (old === undefined) {
      for (const h of handlers) if (h.onAdd) this.call('onAdd', () => h.onAdd!(obj));
    } else {
      for (const h of handlers) if (h.onUpdate) this.call('onUpdate', () => h.onUpdate!(old, obj));
    }
  }

  private resync(): void {
    if (!this.synced) return;
    const handlers = this.handlers.filter((h) => h.onUpdate !== undefined);
    if (handlers.length === 0) return;
    for (const obj of this.cache.list()) for (const h of handlers) this.call('onUpdate', () => h.onUpdate!(obj, obj));
  }

  /** Runs one handler call; a throw is logged, never allowed to break delivery or the reflector. */
  private call(hook: keyof EventHandler<T>, fn: () => void): void {
    try {
      fn();
    } catch (err) {
      this.logger.error('event handler threw', { hook, error: describeError(err) });
    }
  }
}
