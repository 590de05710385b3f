/**
 * Store: the indexed in-memory cache an informer fills and controllers read (client-go's
 * thread-safe store + indexer, and the delta computation of DeltaFIFO.Replace).
 *
 * Objects are keyed "namespace/name", or "name" when cluster-scoped. Every object is indexed by
 * namespace and by its own namespace with the UID of its controller owner (the ownerReference
 * with controller: true), plus any custom indexers; controllers find an owner's Jobs with
 * byIndex('controller-owner', controllerOwnerKey(owner's namespace, owner's UID)). The namespace
 * is part of the key because an ownerReference names no namespace: the garbage collector reads it
 * in the dependent's own, so a UID alone would match a Job anyone planted in another namespace
 * with a copied UID.
 *
 * Guarantees:
 *  - Indexes always agree with the objects: after every add/update/delete/replace, byIndex(i, v)
 *    returns exactly the stored objects whose index function i yields v (an owner change moves
 *    the entry; empty index buckets are dropped, so churn leaks nothing).
 *  - add/update/delete compute every index value before changing anything, so an index function
 *    that throws leaves the store as it was.
 *  - replace() reports what a relist changed: objects new to the store, objects whose
 *    resourceVersion differs (old and new), and objects that vanished (the last known version,
 *    as DeltaFIFO.Replace hands onDelete). An object whose resourceVersion is unchanged keeps its
 *    stored instance and is not reported. (replace() checks every key before changing anything;
 *    an index function that throws midway leaves it half done, a bug its caller must surface.)
 *
 * Stored objects are shared, not copied (copying 20,000 objects per read would dominate CPU and
 * memory): whoever reads them must not mutate them.
 */

import type { KubeObject, OwnerReference } from '../../kube/object.js';

export type { KubeObject, OwnerReference };

/** Maps an object to the index values it is found under; [] = not indexed. */
export type IndexFunc<T> = (obj: T) => readonly string[];

export const NAMESPACE_INDEX = 'namespace';
export const CONTROLLER_OWNER_INDEX = 'controller-owner';

/** "namespace/name", or "name" for cluster-scoped objects. */
export function objectKey(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new TypeError(`object without metadata.name cannot be cached: ${JSON.stringify(obj.metadata ?? {})}`);
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${name}` : name;
}

/** The controlling ownerReference (controller: true), if any; Kubernetes allows at most one. */
export function controllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata?.ownerReferences?.find((ref) => ref.controller === true);
}

export const namespaceIndexFunc: IndexFunc<KubeObject> = (obj) => {
  const ns = obj.metadata?.namespace;
  return ns ? [ns] : [];
};

/** The controller-owner index's value for dependents in `namespace` (none: cluster-scoped) of the owner with `uid`. */
export function controllerOwnerKey(namespace: string | undefined, uid: string): string {
  return namespace ? `${namespace}/${uid}` : uid;
}

export const controllerOwnerIndexFunc: IndexFunc<KubeObject> = (obj) => {
  const uid = controllerOf(obj)?.uid;
  return uid ? [controllerOwnerKey(obj.metadata?.namespace, uid)] : [];
};

/** What a relist changed. */
export interface ReplaceResult<T> {
  added: T[];
  updated: { oldObj: T; newObj: T }[];
  /** The last known version of each object that is no longer listed. */
  deleted: T[];
}

/** The read side, which is all a controller gets. */
export interface ReadonlyStore<T> {
  get(key: string): T | undefined;
  list(): T[];
  keys(): string[];
  /** Objects whose index `indexName` yields `value`; throws for an unknown index. */
  byIndex(indexName: string, value: string): T[];
  /** Keys of those objects. */
  indexKeys(indexName: string, value: string): string[];
  /** Every value the index currently holds. */
  indexValues(indexName: string): string[];
  readonly size: number;
  /** resourceVersion of the last replace(); '' before the first. */
  readonly resourceVersion: string;
}

/** Index name -> index value -> keys. */
type Indices = Map<string, Map<string, Set<string>>>;

export interface StoreOptions<T> {
  /** Added to the built-in namespace and controller-owner indexers. */
  indexers?: Record<string, IndexFunc<T>>;
}

export class Store<T extends KubeObject> implements ReadonlyStore<T> {
  private readonly items = new Map<string, T>();
  private readonly indexers = new Map<string, IndexFunc<T>>();
  /** For every indexer name, every value its function yields for a stored object, with those objects' keys. */
  private readonly indices: Indices = new Map();
  private rv = '';

  constructor(options: StoreOptions<T> = {}) {
    this.addIndexers({
      [NAMESPACE_INDEX]: namespaceIndexFunc,
      [CONTROLLER_OWNER_INDEX]: controllerOwnerIndexFunc,
      ...options.indexers,
    });
  }

  /** Adds indexers, indexing the objects already stored; an existing name is an error. */
  addIndexers(indexers: Record<string, IndexFunc<T>>): void {
    for (const name of Object.keys(indexers)) {
      if (this.indexers.has(name)) throw new Error(`Store: indexer ${name} already exists`);
    }
    for (const [name, fn] of Object.entries(indexers)) {
      const index = new Map<string, Set<string>>();
      for (const [key, obj] of this.items) for (const value of fn(obj)) addTo(index, value, key);
      this.indexers.set(name, fn);
      this.indices.set(name, index);
    }
  }

  /** Stores obj (insert or replace); returns the version it replaced, if any. */
  add(obj: T): T | undefined {
    const key = objectKey(obj);
    const old = this.items.get(key);
    this.reindex(key, old, obj);
    this.items.set(key, obj);
    return old;
  }

  /** Removes the object (given itself or its key); returns the version removed, if any. */
  delete(objOrKey: T | string): T | undefined {
    const key = typeof objOrKey === 'string' ? objOrKey : objectKey(objOrKey);
    const old = this.items.get(key);
    if (old === undefined) return undefined;
    this.reindex(key, old, undefined);
    this.items.delete(key);
    return old;
  }

  /**
   * Makes the store hold exactly `all` (a complete list at `resourceVersion`) and reports the
   * difference. Of two listed objects with the same key the later wins.
   */
  replace(all: readonly T[], resourceVersion: string): ReplaceResult<T> {
    const listed = new Map<string, T>();
    for (const obj of all) listed.set(objectKey(obj), obj);
    const result: ReplaceResult<T> = { added: [], updated: [], deleted: [] };
    for (const [key, old] of this.items) {
      if (listed.has(key)) continue;
      this.reindex(key, old, undefined);
      this.items.delete(key);
      result.deleted.push(old);
    }
    for (const [key, obj] of listed) {
      const old = this.items.get(key);
      if (old === undefined) result.added.push(obj);
      else if (resourceVersionOf(old) !== resourceVersionOf(obj)) result.updated.push({ oldObj: old, newObj: obj });
      else continue;
      this.reindex(key, old, obj);
      this.items.set(key, obj);
    }
    this.rv = resourceVersion;
    return result;
  }

  get(key: string): T | undefined {
    return this.items.get(key);
  }

  list(): T[] {
    return [...this.items.values()];
  }

  keys(): string[] {
    return [...this.items.keys()];
  }

  byIndex(indexName: string, value: string): T[] {
    const keys = this.index(indexName).get(value);
    if (!keys) return [];
    const objs: T[] = [];
    for (const key of keys) objs.push(this.items.get(key)!);
    return objs;
  }

  indexKeys(indexName: string, value: string): string[] {
    return [...(this.index(indexName).get(value) ?? [])];
  }

  indexValues(indexName: string): string[] {
    return [...this.index(indexName).keys()];
  }

  get size(): number {
    return this.items.size;
  }

  get resourceVersion(): string {
    return this.rv;
  }

  private index(indexName: string): Map<string, Set<string>> {
    const index = this.indices.get(indexName);
    if (!index) throw new Error(`Store: no index named ${indexName}`);
    return index;
  }

  /**
   * Moves key from the index values of oldObj to those of newObj. All values are computed
   * first, so a throwing index function changes nothing.
   */
  private reindex(key: string, oldObj: T | undefined, newObj: T | undefined): void {
    const changes: [Map<string, Set<string>>, readonly string[], readonly string[]][] = [];
    for (const [name, fn] of this.indexers) {
      const before = oldObj ? fn(oldObj) : [];
      const after = newObj ? fn(newObj) : [];
      if (!sameValues(before, after)) changes.push([this.indices.get(name)!, before, after]);
    }
    for (const [index, before, after] of changes) {
      for (const value of before) if (!after.includes(value)) removeFrom(index, value, key);
      for (const value of after) addTo(index, value, key);
    }
  }
}

export function resourceVersionOf(obj: KubeObject): string | undefined {
  return obj.metadata?.resourceVersion;
}

function sameValues(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((v, i) => v === b[i]);
}

function addTo(index: Map<string, Set<string>>, value: string, key: string): void {
  const keys = index.get(value);
  if (keys) keys.add(key);
  else index.set(value, new Set([key]));
}

function removeFrom(index: Map<string, Set<string>>, value: string, key: string): void {
  const keys = index.get(value);
  if (!keys) return;
  keys.delete(key);
  if (keys.size === 0) index.delete(value);
}
