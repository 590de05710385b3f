/**
 * Exponential backoff with jitter, for anything that retries a failing call to the API server
 * (the informer's list and watch, and any other part that wants the same rhythm).
 *
 * Defaults are client-go's reflector backoff: 800 ms, doubling, capped at 30 s, jittered, and
 * reset once 2 minutes pass without a failure.
 *
 * Guarantees:
 *  - The n-th consecutive failure waits a delay drawn uniformly from [b, b * (1 + jitter)], where
 *    b = min(maxMs, initialMs * factor^(n-1)), and never more than maxMs. (client-go lets jitter
 *    push a capped delay up to 2x the cap; here the cap is a hard bound. Callers that failed
 *    together are still spread out at the cap, by the offsets the earlier, jittered steps left.)
 *  - A failure that comes resetAfterMs or more after the previous one starts over at initialMs,
 *    so a long healthy stretch forgets an old outage without the caller having to say so.
 *  - Time is read through the injected Clock, so tests drive it with a FakeClock.
 */
import { realClock, type Clock } from './clock.js';

export interface BackoffOptions {
  /** First delay; default 800 ms. */
  initialMs?: number;
  /** Growth per consecutive failure; default 2. */
  factor?: number;
  /** Upper bound of any delay, jitter included; default 30 s. */
  maxMs?: number;
  /** Spread: a delay is drawn from [b, b * (1 + jitter)]; default 1 (client-go's reflector). 0 = none. */
  jitter?: number;
  /** A failure this long after the previous one starts over at initialMs; default 2 min. */
  resetAfterMs?: number;
  clock?: Clock;
  /** Uniform in [0, 1); injectable so tests get exact delays. */
  random?: () => number;
}

/** client-go's reflector backoff (NewExponentialBackoffManager(800ms, 30s, 2min, 2.0, 1.0)). */
export const reflectorBackoffDefaults = {
  initialMs: 800,
  factor: 2,
  maxMs: 30_000,
  jitter: 1,
  resetAfterMs: 120_000,
} as const;

export class Backoff {
  private readonly initialMs: number;
  private readonly factor: number;
  private readonly maxMs: number;
  private readonly jitter: number;
  private readonly resetAfterMs: number;
  private readonly clock: Clock;
  private readonly random: () => number;
  /** Failures since the last reset; the next delay's base is initialMs * factor^failures. */
  private failures = 0;
  /** Clock time of the last failure; -Infinity when none since the last reset. */
  private lastFailureAt = -Infinity;

  constructor(options: BackoffOptions = {}) {
    const o = { ...reflectorBackoffDefaults, ...stripUndefined(options) };
    if (!(o.initialMs > 0)) throw new RangeError(`Backoff: initialMs must be > 0, got ${o.initialMs}`);
    if (!(o.factor >= 1)) throw new RangeError(`Backoff: factor must be >= 1, got ${o.factor}`);
    if (!(o.maxMs >= o.initialMs)) throw new RangeError(`Backoff: maxMs (${o.maxMs}) must be >= initialMs (${o.initialMs})`);
    if (!(o.jitter >= 0)) throw new RangeError(`Backoff: jitter must be >= 0, got ${o.jitter}`);
    if (!(o.resetAfterMs >= 0)) throw new RangeError(`Backoff: resetAfterMs must be >= 0, got ${o.resetAfterMs}`);
    this.initialMs = o.initialMs;
    this.factor = o.factor;
    this.maxMs = o.maxMs;
    this.jitter = o.jitter;
    this.resetAfterMs = o.resetAfterMs;
    this.clock = options.clock ?? realClock;
    this.random = options.random ?? Math.random;
  }

  /** Records a failure and returns how long to wait before the next attempt, in ms. */
  next(): number {
    const now = this.clock.now();
    if (now - this.lastFailureAt >= this.resetAfterMs) this.failures = 0;
    this.lastFailureAt = now;
    // factor ** failures reaches Infinity rather than wrapping, so the cap always holds.
    const base = Math.min(this.maxMs, this.initialMs * this.factor ** this.failures);
    this.failures++;
    return Math.min(this.maxMs, base * (1 + this.jitter * this.random()));
  }

  /** Records a failure and sleeps next() ms; rejects with the abort reason when signal aborts. */
  wait(signal?: AbortSignal): Promise<void> {
    return this.clock.sleep(this.next(), signal);
  }
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
