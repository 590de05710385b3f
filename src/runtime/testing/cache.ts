/**
 * An ObjectCache for reconciler tests: objects put in by hand or copied from a FakeClient's store
 * (what an informer would deliver), indexed by controller owner as the real caches are, with the
 * manager's read-your-writes when asked for.
 */
import type { KubeObject } from '../../kube/object.js';
import type { ResourceType } from '../../kube/resources.js';
import type { ObjectCache } from '../cache/objectcache.js';
import { ReadYourWrites } from '../cache/readyourwrites.js';
import { objectKey, Store, type CONTROLLER_OWNER_INDEX } from '../cache/store.js';
import type { FakeClient } from './client.js';

export interface FakeCacheOptions<T> {
  /** Remember our writes (a primary's cache): get() never returns older than what wrote() was told. */
  readYourWrites?: boolean;
  /** What the informer would let in (its label selector); default everything. */
  filter?: (obj: T) => boolean;
  /** What the informer would cache of an object (a declaration's CacheTransform); default as it is. */
  transform?: (obj: T) => T;
}

export class FakeCache<T extends KubeObject> implements ObjectCache<T> {
  private readonly store = new Store<T>();
  private readonly reads: ReadYourWrites<T> | undefined;
  private readonly filter: (obj: T) => boolean;
  private readonly transform: (obj: T) => T;
  /** Present with readYourWrites only, as on the real caches. */
  readonly wrote?: (obj: T) => void;

  constructor(options: FakeCacheOptions<T> = {}) {
    this.filter = options.filter ?? (() => true);
    this.transform = options.transform ?? ((obj) => obj);
    if (options.readYourWrites) {
      const reads = new ReadYourWrites<T>(this.store, { addEventHandler: () => undefined });
      this.reads = reads;
      this.wrote = (obj) => reads.wrote(obj);
    }
  }

  /** Adds or replaces objects, as watch events would. */
  add(...objs: T[]): this {
    for (const obj of objs) this.store.add(obj);
    return this;
  }

  delete(key: string): void {
    this.store.delete(key);
  }

  /** Brings the cache up to date with what `client` stores of `type` (the informer caught up). */
  syncFrom(client: FakeClient, type: ResourceType<T>): this {
    const live = client.all(type).filter(this.filter);
    for (const key of this.store.keys()) if (!live.some((o) => objectKey(o) === key)) this.store.delete(key);
    // A shallow copy: a transform may replace top-level fields, never the stored object's.
    return this.add(...live.map((obj) => this.transform({ ...obj })));
  }

  get(key: string): T | undefined {
    return this.reads ? this.reads.get(key) : this.store.get(key);
  }

  byIndex(index: typeof CONTROLLER_OWNER_INDEX, value: string): T[] {
    return this.store.byIndex(index, value);
  }
}
