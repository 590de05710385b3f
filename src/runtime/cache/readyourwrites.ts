/**
 * Read-your-own-writes over an informer's cache (client-go's "expectations", java-operator-sdk's
 * temporary resource cache): after we write an object, the cache holds the older copy until the
 * watch delivers our write, and a reconcile acting on that older copy makes a conditional write
 * the server refuses (409), or worse, decides from a state that is no longer true.
 *
 * Guarantees:
 *  - get(key) never returns a copy older than the last one a write of ours returned for that key:
 *    it returns our written copy until the cache holds one at least as new, then the cache's.
 *  - A key whose object left the cache (deleted) returns undefined: our write does not revive it.
 *  - An entry is dropped as soon as the cache catches up (on the informer's event, or on the
 *    next get), so the map holds only writes whose watch events are still on their way.
 *
 * "Older" compares resourceVersions as integers, which every API server backed by etcd uses
 * (the same assumption controller-runtime and java-operator-sdk make for this). A
 * resourceVersion that is not an integer cannot be ordered: then the cache's copy is used, as
 * without this layer.
 */
import type { EventSource } from './handler.js';
import { objectKey, type KubeObject } from './store.js';

export interface ReadableCache<T> {
  get(key: string): T | undefined;
}

/** -1, 0 or 1 as a is older, the same or newer than b; undefined when they cannot be ordered. */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number | undefined {
  if (a === undefined || b === undefined) return undefined;
  if (a === b) return 0;
  if (!/^\d+$/.test(a) || !/^\d+$/.test(b)) return undefined;
  const x = BigInt(a);
  const y = BigInt(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

export class ReadYourWrites<T extends KubeObject> {
  private readonly written = new Map<string, T>();

  constructor(
    private readonly cache: ReadableCache<T>,
    events: EventSource<T>,
  ) {
    const caughtUp = (obj: T): void => void this.dropIfCaughtUp(objectKey(obj), obj);
    events.addEventHandler({
      onAdd: caughtUp,
      onUpdate: (_old, obj) => caughtUp(obj),
      onDelete: (obj) => this.written.delete(objectKey(obj)),
    });
  }

  /** Remembers `obj` as a write of ours returned it (a newer copy than any we remembered). */
  wrote(obj: T): void {
    const key = objectKey(obj);
    const known = this.written.get(key);
    if (known && compareResourceVersions(obj.metadata?.resourceVersion, known.metadata?.resourceVersion) === -1) return;
    this.written.set(key, obj);
    this.dropIfCaughtUp(key, this.cache.get(key));
  }

  get(key: string): T | undefined {
    const cached = this.cache.get(key);
    const mine = this.written.get(key);
    if (!mine) return cached;
    if (!cached) {
      this.written.delete(key);
      return undefined;
    }
    return this.dropIfCaughtUp(key, cached) ? cached : mine;
  }

  /** Writes not yet seen in the cache (for tests and metrics). */
  get pending(): number {
    return this.written.size;
  }

  /** True (and the entry dropped) when `cached` is at least as new as our write, or cannot be ordered. */
  private dropIfCaughtUp(key: string, cached: T | undefined): boolean {
    const mine = this.written.get(key);
    if (!mine || !cached) return true;
    const sameObject = cached.metadata?.uid === mine.metadata?.uid;
    // A copy of another object under the same name (re-created) is never "older" than ours.
    if (sameObject && compareResourceVersions(cached.metadata?.resourceVersion, mine.metadata?.resourceVersion) === -1) return false;
    this.written.delete(key);
    return true;
  }
}
