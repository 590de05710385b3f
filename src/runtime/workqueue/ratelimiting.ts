/**
 * RateLimitingQueue: the queue a controller uses. A failed key goes back through
 * addRateLimited(), which waits as long as the rate limiter says; a key that succeeded is
 * forget()-ed so its next failure starts from the base delay again.
 *
 * Guarantees: those of DelayingQueue (and so WorkQueue), plus: the limiter is consulted once
 * per addRateLimited() and never after shut down, so failures stop being counted for a queue
 * nobody reads any more.
 *
 * Hand-written with the queue (see queue.ts): no maintained npm package offers a
 * Kubernetes-style workqueue.
 */
import type { Clock } from '../clock.js';
import { DelayingQueue } from './delaying.js';
import type { FairReadySetOptions } from './fair.js';
import type { WorkQueueMetricsProvider } from './metrics.js';
import type { WorkQueueOptions } from './queue.js';
import { defaultControllerRateLimiter, type RateLimiter } from './ratelimiter.js';

export interface RateLimitingQueueOptions<K extends string = string> extends WorkQueueOptions<K> {
  /** Defaults to defaultControllerRateLimiter on the queue's clock. */
  rateLimiter?: RateLimiter<K>;
}

export class RateLimitingQueue<K extends string = string> extends DelayingQueue<K> {
  private readonly rateLimiter: RateLimiter<K>;

  constructor(options: RateLimitingQueueOptions<K> = {}) {
    super(options);
    this.rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<K>(this.clock);
  }

  /** Adds key, at `priority`, after the wait the rate limiter gives it, counting a retry. */
  addRateLimited(key: K, priority?: number): void {
    if (this.shuttingDown) return;
    this.metrics.incRetries();
    this.addAfter(key, this.rateLimiter.when(key), priority);
  }

  /** Ends rate limiting for key (it succeeded); does not remove it from the queue. */
  forget(key: K): void {
    this.rateLimiter.forget(key);
  }

  /** How many times key has been requeued through addRateLimited since it was last forgotten. */
  numRequeues(key: K): number {
    return this.rateLimiter.retries(key);
  }
}

/** Creates the queue for one controller; name labels its metrics. */
export function newRateLimitingQueue<K extends string = string>(options: {
  name: string;
  clock?: Clock;
  rateLimiter?: RateLimiter<K>;
  metrics?: WorkQueueMetricsProvider;
  order?: FairReadySetOptions<K>;
}): RateLimitingQueue<K> {
  return new RateLimitingQueue<K>(options);
}
