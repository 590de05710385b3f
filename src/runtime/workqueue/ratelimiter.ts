/**
 * Rate limiters: how long a failed key waits before its next attempt, as in client-go.
 *
 *  - ItemExponentialFailureRateLimiter: per key, base * 2^failures, capped; one broken object
 *    backs off without slowing the others.
 *  - BucketRateLimiter: one token bucket shared by all keys (qps, burst); bounds the total retry
 *    rate against the API server when many keys fail at once.
 *  - MaxOfRateLimiter: the longest wait any of its limiters asks for.
 *  - defaultControllerRateLimiter: max(exponential 5 ms..1000 s, bucket 10 qps / burst 100),
 *    client-go's default for controllers.
 *
 * when() is a reservation, not a question: it counts a failure or takes a token, so call it
 * exactly once per requeue. Hand-written with the queue (see queue.ts): the queue needs a wait
 * handed back (reserve now, wait in addAfter, like golang.org/x/time/rate's Reserve().Delay())
 * on the injected Clock, whereas the common npm limiters schedule or reject the calls themselves
 * on the wall clock.
 */
import { realClock, type Clock } from '../clock.js';

export interface RateLimiter<K extends string = string> {
  /** Milliseconds key must wait before its next attempt; records the attempt. */
  when(key: K): number;
  /** Stops tracking key (it succeeded): its next failure starts from the base delay. */
  forget(key: K): void;
  /** Failures recorded for key since it was last forgotten. */
  retries(key: K): number;
}

export class ItemExponentialFailureRateLimiter<K extends string = string> implements RateLimiter<K> {
  /** Failures per key since its last forget(); a key is present iff it has failed. */
  private readonly failures = new Map<K, number>();

  constructor(
    private readonly baseMs = 5,
    private readonly maxMs = 1_000_000,
  ) {}

  when(key: K): number {
    const failures = this.failures.get(key) ?? 0;
    this.failures.set(key, failures + 1);
    // 2 ** failures reaches Infinity rather than wrapping, so the cap always holds.
    return Math.min(this.baseMs * 2 ** failures, this.maxMs);
  }

  forget(key: K): void {
    this.failures.delete(key);
  }

  retries(key: K): number {
    return this.failures.get(key) ?? 0;
  }
}

export class BucketRateLimiter<K extends string = string> implements RateLimiter<K> {
  /**
   * Tokens as of `updatedAt`, at most burst. Goes negative as callers reserve tokens not yet
   * refilled: -tokens is the backlog, which is what the next caller must wait behind.
   */
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly qps = 10,
    private readonly burst = 100,
    private readonly clock: Clock = realClock,
  ) {
    if (!(qps > 0)) throw new RangeError(`BucketRateLimiter: qps must be > 0, got ${qps}`);
    if (!(burst >= 1)) throw new RangeError(`BucketRateLimiter: burst must be >= 1, got ${burst}`);
    this.tokens = burst;
    this.updatedAt = clock.now();
  }

  when(_key: K): number {
    const now = this.clock.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.updatedAt) * this.qps) / 1000);
    this.updatedAt = now;
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens * 1000) / this.qps;
  }

  /** The bucket is shared, not per key: nothing to forget. */
  forget(_key: K): void {}

  retries(_key: K): number {
    return 0;
  }
}

export class MaxOfRateLimiter<K extends string = string> implements RateLimiter<K> {
  private readonly limiters: readonly RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    this.limiters = limiters;
  }

  /** Asks every limiter, not only until the longest is known: each must record the attempt. */
  when(key: K): number {
    let longest = 0;
    for (const limiter of this.limiters) longest = Math.max(longest, limiter.when(key));
    return longest;
  }

  forget(key: K): void {
    for (const limiter of this.limiters) limiter.forget(key);
  }

  retries(key: K): number {
    let most = 0;
    for (const limiter of this.limiters) most = Math.max(most, limiter.retries(key));
    return most;
  }
}

/** client-go's DefaultControllerRateLimiter: per-key exponential 5 ms..1000 s, overall 10 qps with burst 100. */
export function defaultControllerRateLimiter<K extends string = string>(clock: Clock = realClock): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(new ItemExponentialFailureRateLimiter<K>(5, 1_000_000), new BucketRateLimiter<K>(10, 100, clock));
}
