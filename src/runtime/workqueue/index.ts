/**
 * The operator's work queue, with client-go's guarantees: dedup, per-key exclusivity,
 * requeue-on-done, delays and rate-limited retries. Controllers use newRateLimitingQueue();
 * the layers beneath are exported for tests and for parts that need less.
 */
export { WorkQueue, type WorkItem, type WorkQueueOptions } from './queue.js';
export { DelayingQueue } from './delaying.js';
export { DEFAULT_AGING_MS, DEFAULT_PRIORITY, FairReadySet, LOW_PRIORITY, namespaceOf, type FairReadySetOptions } from './fair.js';
export {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
  type RateLimiter,
} from './ratelimiter.js';
export { RateLimitingQueue, newRateLimitingQueue, type RateLimitingQueueOptions } from './ratelimiting.js';
export { noopWorkQueueMetrics, type InFlightWork, type WorkQueueMetrics, type WorkQueueMetricsProvider } from './metrics.js';
