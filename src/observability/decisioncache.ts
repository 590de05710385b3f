/**
 * A small, bounded cache of access decisions (controller-runtime's metrics filter caches its
 * TokenReviews and SubjectAccessReviews the same way), so a scraper that presents the same token
 * every 15-60 s costs the API server two reviews per TTL, not two per scrape.
 *
 * Guarantees: decisions are held in classes (`classOf`, e.g. allowed and denied), each of at most
 * `maxEntries`; past that the least recently used one of that class is dropped, so decisions of
 * one class never push out another's (a flood of refused tokens cannot evict the scraper's
 * approval). A key is in one class at most. A decision is served until its TTL (chosen per
 * decision by `ttlMs`, e.g. allowed longer than denied) has passed on the injected clock; then
 * it is computed again, and compute() is handed the expired decision (kept until replaced or
 * pushed out, also when the new computation fails), so a caller can tell a renewal from a key
 * never seen. Concurrent lookups of one key share one computation. A computation that fails is
 * not cached: the next lookup tries again. Keys are whatever the caller gives: the metrics filter
 * gives a hash of the token, never the token.
 *
 * Hand-written (a Map in insertion order is an LRU): the LRU packages on npm would bring a
 * dependency for ~50 lines, and none shares in-flight lookups.
 */

export interface DecisionCacheOptions<V> {
  /** How long a decision is served, from the moment it was made. */
  ttlMs(value: V): number;
  /** The class a decision is held in; default one class for all. */
  classOf?(value: V): string;
  /** Bound on cached decisions of each class. */
  maxEntries: number;
  /** Monotonic milliseconds (runtime/clock's Clock.now fits). */
  now(): number;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

export class DecisionCache<V> {
  /** Per class, its decisions by key, least recently used first. */
  private readonly classes = new Map<string, Map<string, Entry<V>>>();
  private readonly inFlight = new Map<string, Promise<V>>();

  constructor(private readonly options: DecisionCacheOptions<V>) {
    if (!(options.maxEntries >= 1)) throw new Error('DecisionCache: maxEntries must be at least 1');
  }

  /** Decisions held now, of every class (expired ones included until they are replaced or pushed out). */
  get size(): number {
    let size = 0;
    for (const entries of this.classes.values()) size += entries.size;
    return size;
  }

  /**
   * The cached decision for key, or the result of compute() (shared with concurrent callers),
   * which is given the key's expired decision, if one is still held.
   */
  get(key: string, compute: (expired: V | undefined) => Promise<V>): Promise<V> {
    const held = this.lookup(key);
    if (held) {
      const { entries, entry } = held;
      if (entry.expiresAt > this.options.now()) {
        entries.delete(key);
        entries.set(key, entry); // most recently used: last in the Map's order
        return Promise.resolve(entry.value);
      }
    }
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const done = compute(held?.entry.value).then(
      (value) => {
        this.inFlight.delete(key);
        this.store(key, value);
        return value;
      },
      (err: unknown) => {
        this.inFlight.delete(key);
        throw err;
      },
    );
    this.inFlight.set(key, done);
    return done;
  }

  private lookup(key: string): { entries: Map<string, Entry<V>>; entry: Entry<V> } | undefined {
    for (const entries of this.classes.values()) {
      const entry = entries.get(key);
      if (entry) return { entries, entry };
    }
    return undefined;
  }

  private store(key: string, value: V): void {
    for (const entries of this.classes.values()) entries.delete(key);
    const ttl = this.options.ttlMs(value);
    if (!(ttl > 0)) return;
    const name = this.options.classOf?.(value) ?? '';
    let entries = this.classes.get(name);
    if (!entries) this.classes.set(name, (entries = new Map<string, Entry<V>>()));
    entries.set(key, { value, expiresAt: this.options.now() + ttl });
    while (entries.size > this.options.maxEntries) {
      const oldest = entries.keys().next().value as string;
      entries.delete(oldest);
    }
  }
}
