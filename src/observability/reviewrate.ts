/**
 * How many scrapes with a new token the metrics filter may send to the API server for review
 * (a TokenReview, then a SubjectAccessReview), per second: overall and per client address.
 *
 *   bucket        refill   burst   why
 *   overall       5 / s    10      a few scrapers need a review each per approval TTL (2 min);
 *                                  issue 44's flood made 800 a second in the operator's name
 *   per address   1 / s    5       one flooding address cannot take the overall budget alone
 *
 * Guarantees: tryTake() takes one token from the address's bucket and one from the overall
 * bucket when both hold one, and takes none otherwise (a refused scrape costs no budget, so a
 * flood does not push a backlog onto the scrapers after it). The per-address buckets are
 * bounded: past `maxAddresses` the full ones (which differ from a new one in nothing) are
 * dropped, then the oldest. Time is the injected monotonic clock.
 *
 * Why not the workqueue's BucketRateLimiter: it reserves (goes negative and answers a wait),
 * which is what a requeue needs; a refused scrape must take nothing.
 */

export interface Rate {
  /** Tokens refilled per second. */
  perSecond: number;
  /** Tokens at most (and at the start). */
  burst: number;
}

export interface ReviewRate {
  overall: Rate;
  perAddress: Rate;
}

export const REVIEW_RATE: Readonly<ReviewRate> = Object.freeze({
  overall: Object.freeze({ perSecond: 5, burst: 10 }),
  perAddress: Object.freeze({ perSecond: 1, burst: 5 }),
});

/** Per-address buckets kept at most (the servers hold 32 connections at once). */
const MAX_ADDRESSES = 1_024;

class TokenBucket {
  private tokens: number;
  private updatedAt: number;

  constructor(
    private readonly rate: Rate,
    now: number,
  ) {
    if (!(rate.perSecond > 0) || !(rate.burst >= 1))
      throw new RangeError(`review rate needs perSecond > 0 and burst >= 1, got ${JSON.stringify(rate)}`);
    this.tokens = rate.burst;
    this.updatedAt = now;
  }

  /** Tokens held at `now`, refilled. */
  available(now: number): number {
    this.tokens = Math.min(this.rate.burst, this.tokens + ((now - this.updatedAt) * this.rate.perSecond) / 1000);
    this.updatedAt = now;
    return this.tokens;
  }

  take(): void {
    this.tokens -= 1;
  }

  full(now: number): boolean {
    return this.available(now) >= this.rate.burst;
  }
}

export class ReviewRateLimiter {
  private readonly overall: TokenBucket;
  private readonly byAddress = new Map<string, TokenBucket>();

  constructor(
    private readonly rate: ReviewRate,
    private readonly now: () => number,
    private readonly maxAddresses = MAX_ADDRESSES,
  ) {
    this.overall = new TokenBucket(rate.overall, now());
  }

  /** Whether a review for a scrape from `address` may be sent now; if so it is counted. */
  tryTake(address: string): boolean {
    const now = this.now();
    const own = this.bucketOf(address, now);
    if (own.available(now) < 1 || this.overall.available(now) < 1) return false;
    own.take();
    this.overall.take();
    return true;
  }

  private bucketOf(address: string, now: number): TokenBucket {
    const held = this.byAddress.get(address);
    if (held) return held;
    if (this.byAddress.size >= this.maxAddresses) {
      for (const [key, bucket] of this.byAddress) if (bucket.full(now)) this.byAddress.delete(key);
      if (this.byAddress.size >= this.maxAddresses) this.byAddress.delete(this.byAddress.keys().next().value as string);
    }
    const bucket = new TokenBucket(this.rate.perAddress, now);
    this.byAddress.set(address, bucket);
    return bucket;
  }
}
