/**
 * The two rules, after client-go's EventCorrelator, that keep Events useful and cheap when a
 * controller repeats itself:
 *
 * - SpamFilter: a token bucket per involved object (default burst 25, one token back every
 *   5 minutes: client-go's values). Every recorded event takes a token, so a reconcile loop gone
 *   hot writes at most 25 Events for an object and then one per 5 minutes, however fast it loops.
 * - SimilarEventAggregator: events on one object with the same type and reason but different
 *   messages (a message with a changing number in it) are kept apart until 10 distinct messages
 *   were seen within 10 minutes; from then on they are folded into one Event whose message is
 *   "(combined from similar events): <latest message>" and whose count grows.
 *
 * Both are pure state machines over an injected "now" (monotonic milliseconds) with bounded
 * memory (least recently used keys are forgotten past maxKeys).
 */

/** A Map that forgets its least recently used keys beyond `max`. */
export class LruMap<K, V> {
  private readonly map = new Map<K, V>();
  constructor(private readonly max: number) {}

  get(key: K): V | undefined {
    const v = this.map.get(key);
    if (v !== undefined) {
      this.map.delete(key);
      this.map.set(key, v);
    }
    return v;
  }

  set(key: K, value: V): void {
    this.map.delete(key);
    this.map.set(key, value);
    if (this.map.size > this.max) this.map.delete(this.map.keys().next().value as K);
  }

  get size(): number {
    return this.map.size;
  }
}

export interface SpamFilterOptions {
  /** Events an object may have in a burst; default 25. */
  burst?: number;
  /** One token comes back per this many ms; default 300000 (5 minutes). */
  refillIntervalMs?: number;
  /** Objects remembered; default 4096. */
  maxKeys?: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class SpamFilter {
  private readonly burst: number;
  private readonly refillIntervalMs: number;
  private readonly buckets: LruMap<string, Bucket>;

  constructor(options: SpamFilterOptions = {}) {
    this.burst = options.burst ?? 25;
    this.refillIntervalMs = options.refillIntervalMs ?? 300_000;
    this.buckets = new LruMap(options.maxKeys ?? 4096);
  }

  /** Takes a token for `key` if one is left; false means the event must be dropped. */
  allow(key: string, now: number): boolean {
    let bucket = this.buckets.get(key);
    if (!bucket) {
      bucket = { tokens: this.burst, updatedAt: now };
      this.buckets.set(key, bucket);
    } else {
      const refill = Math.max(0, now - bucket.updatedAt) / this.refillIntervalMs;
      bucket.tokens = Math.min(this.burst, bucket.tokens + refill);
      bucket.updatedAt = now;
    }
    if (bucket.tokens < 1) return false;
    bucket.tokens -= 1;
    return true;
  }
}

export interface AggregatorOptions {
  /** Distinct messages kept apart before folding; default 10. */
  maxEvents?: number;
  /** A group is forgotten after this long without events; default 600000 (10 minutes). */
  windowMs?: number;
  /** Groups remembered; default 4096. */
  maxKeys?: number;
}

interface Group {
  messages: Set<string>;
  lastAt: number;
}

export const COMBINED_PREFIX = '(combined from similar events): ';

export class SimilarEventAggregator {
  private readonly maxEvents: number;
  private readonly windowMs: number;
  private readonly groups: LruMap<string, Group>;

  constructor(options: AggregatorOptions = {}) {
    this.maxEvents = options.maxEvents ?? 10;
    this.windowMs = options.windowMs ?? 600_000;
    this.groups = new LruMap(options.maxKeys ?? 4096);
  }

  /**
   * groupKey identifies object + type + reason. Returns whether the event stays as it is or is
   * folded into the group's combined event, and the message to write.
   */
  aggregate(groupKey: string, message: string, now: number): { combined: boolean; message: string } {
    let group = this.groups.get(groupKey);
    if (!group || now - group.lastAt > this.windowMs) {
      group = { messages: new Set(), lastAt: now };
      this.groups.set(groupKey, group);
    }
    group.lastAt = now;
    // Once folding, more messages change nothing: the set stays bounded by maxEvents.
    if (group.messages.size < this.maxEvents) group.messages.add(message);
    if (group.messages.size < this.maxEvents) return { combined: false, message };
    return { combined: true, message: COMBINED_PREFIX + message };
  }
}
