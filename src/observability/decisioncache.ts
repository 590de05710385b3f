/**
 * A small, bounded cache of access decisions (controller-runtime's metrics filter caches its
 * TokenReviews and SubjectAccessReviews the same way), so a scraper that presents the same token
 * every 15-60 s costs the API server two reviews per TTL, not two per scrape.
 *
 * Guarantees: at most `maxEntries` decisions are held; past that the least recently used one is
 * dropped. A decision is served until its TTL (chosen per decision by `ttlMs`, e.g. allowed longer
 * than denied) has passed on the injected clock, then looked up again. Concurrent lookups of one
 * key share one computation. A computation that fails is not cached: the next lookup tries again.
 * Keys are whatever the caller gives: the metrics filter gives a hash of the token, never the token.
 *
 * Hand-written (a Map in insertion order is an LRU): the LRU packages on npm would bring a
 * dependency for ~40 lines, and none shares in-flight lookups.
 */

export interface DecisionCacheOptions<V> {
  /** How long a decision is served, from the moment it was made. */
  ttlMs(value: V): number;
  /** Bound on cached decisions. */
  maxEntries: number;
  /** Monotonic milliseconds (runtime/clock's Clock.now fits). */
  now(): number;
}

interface Entry<V> {
  value: V;
  expiresAt: number;
}

export class DecisionCache<V> {
  private readonly entries = new Map<string, Entry<V>>();
  private readonly inFlight = new Map<string, Promise<V>>();

  constructor(private readonly options: DecisionCacheOptions<V>) {
    if (!(options.maxEntries >= 1)) throw new Error('DecisionCache: maxEntries must be at least 1');
  }

  /** Decisions held now (expired ones included until they are looked up or pushed out). */
  get size(): number {
    return this.entries.size;
  }

  /** The cached decision for key, or the result of compute() (shared with concurrent callers). */
  get(key: string, compute: () => Promise<V>): Promise<V> {
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      if (hit.expiresAt > this.options.now()) {
        this.entries.set(key, hit); // most recently used: last in the Map's order
        return Promise.resolve(hit.value);
      }
    }
    const pending = this.inFlight.get(key);
    if (pending) return pending;
    const done = compute().then(
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

  private store(key: string, value: V): void {
    const ttl = this.options.ttlMs(value);
    if (!(ttl > 0)) return;
    this.entries.delete(key);
    this.entries.set(key, { value, expiresAt: this.options.now() + ttl });
    while (this.entries.size > this.options.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
  }
}
