/**
 * What a work queue tells the metrics layer, and nothing about how it is exported.
 *
 * A queue reports events as they happen (adds, depth changes, queue and work durations,
 * retries) through a WorkQueueMetrics bound to its name. The two in-flight gauges
 * (unfinished work, longest running processor) are not events: they grow with every
 * passing second, so instead of a periodic tick that pushes them (a timer to own, to
 * cancel, and always stale by up to a period) the queue hands the provider a probe that
 * computes both from the in-flight start times. The metrics layer calls it at scrape time
 * (prom-client's collect()), so the values are exact and the queue owns no timer.
 *
 * Each hook maps to one of controller-runtime's series, all labelled by queue name; the
 * mapping is written on the hook so the exporter has a single place to follow.
 *
 * Hand-written with the queue (see queue.ts): the interface is shaped by what the queue
 * can observe, not by a metrics library.
 */

/** Work handed out and not yet done, measured at the moment of asking. */
export interface InFlightWork {
  /** workqueue_unfinished_work_seconds: the ages of all in-flight keys, summed. */
  readonly unfinishedWorkSeconds: number;
  /** workqueue_longest_running_processor_seconds: the age of the oldest in-flight key; 0 when none. */
  readonly longestRunningProcessorSeconds: number;
  /**
   * workqueue_longest_waiting_seconds{priority}: per priority the queue has seen, how long its
   * longest-waiting key has waited (0 when none waits). Optional for probes that have no waiting keys to report.
   */
  readonly longestWaitingSeconds?: ReadonlyMap<number, number>;
}

/** The event hooks of one queue; the queue's name is already bound. */
export interface WorkQueueMetrics {
  /**
   * workqueue_depth{priority} (gauge, controller-runtime's priority label): keys of that priority
   * waiting to be handed out, counting those held back behind their own processing.
   */
  setDepth(keys: number, priority: number): void;
  /** workqueue_adds_total (counter): adds that made a key dirty; re-adding a waiting key does not count. */
  incAdds(): void;
  /** workqueue_queue_duration_seconds{priority} (histogram): from a key becoming dirty to its being handed out. */
  observeQueueDuration(seconds: number, priority: number): void;
  /** workqueue_work_duration_seconds (histogram): from a key being handed out to its done(). */
  observeWorkDuration(seconds: number): void;
  /** workqueue_retries_total (counter): keys requeued through addRateLimited. */
  incRetries(): void;
  /**
   * workqueue_delayed_depth (gauge, ours): keys waiting out a delay (a retry's backoff, a
   * requeue-after) before they are added; not in workqueue_depth. 0 with nothing queued or in
   * flight means the queue is idle until the next event: no retry is still due.
   */
  setDelayedDepth(keys: number): void;
}

/** Creates the hooks for each named queue and keeps its in-flight probe for scrape time. */
export interface WorkQueueMetricsProvider {
  /**
   * Called once per named queue, at construction. `inFlight` stays valid for the queue's
   * lifetime and is cheap: it walks only the in-flight keys (bounded by the worker count).
   */
  forQueue(name: string, inFlight: () => InFlightWork): WorkQueueMetrics;
}

const noopQueueMetrics: WorkQueueMetrics = {
  setDepth() {},
  incAdds() {},
  observeQueueDuration() {},
  observeWorkDuration() {},
  incRetries() {},
  setDelayedDepth() {},
};

/** Records nothing: the default, so queues under test and in tools carry no metrics cost. */
export const noopWorkQueueMetrics: WorkQueueMetricsProvider = {
  forQueue: () => noopQueueMetrics,
};
