/**
 * The Prometheus side of the runtime's metric interfaces, with prom-client.
 *
 * Names, labels, help texts and histogram buckets follow client-go's workqueue metrics as
 * controller-runtime registers them, controller-runtime's controller metrics and client-go's
 * leader election gauge, so dashboards and alerts written for Go operators work unchanged.
 *
 * Guarantees: every series a controller can produce exists from its start (reconcile_total for
 * each result, reconcile_errors_total and terminal_reconcile_errors_total are created at 0 when the controller reports its
 * concurrency), so rate() and absent() behave from the first scrape; in-flight gauges are
 * computed at scrape time from the queues' probes, never stale.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics, type Aggregator } from 'prom-client';
import {
  type ControllerMetrics,
  type EventType,
  type InFlightWork,
  type InformerMetrics,
  type LeaderElectionMetrics,
  LONGEST_TIMER_MS,
  MALFORMED_REASONS,
  type ReconcileResult,
  type RestClientMetrics,
  WATCH_ERROR_REASONS,
  type WorkQueueMetrics,
  type WorkQueueMetricsProvider,
} from '../runtime/index.js';
import { VERSION } from '../version.js';
import { EventLoopDelayRecorder, type EventLoopDelayStats } from './eventloopdelay.js';
import { sharedEventLoopSampler, type EventLoopSampler } from './loopsampler.js';
import { EVENT_DROP_REASONS, type EventRecorderMetrics } from './events/metrics.js';

/** controller-runtime's reconcile_time_seconds buckets: fine below 1 s, up to a minute. */
export const RECONCILE_TIME_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5,
  4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
] as const;

/** controller-runtime's workqueue duration buckets: prometheus.ExponentialBuckets(10e-9, 10, 12). */
export const WORKQUEUE_DURATION_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10, 100, 1000] as const;

const RESULTS: readonly ReconcileResult[] = ['success', 'error', 'requeue', 'requeue_after'];

/**
 * prom-client's own event-loop delay monitor cannot be left out of its default metrics, and its
 * timer wakes the process at its resolution, idle or not (10 a second at 100 ms). It is created
 * with a resolution it never reaches (its timer's first run would be 24.8 days away), and its seven
 * histogram gauges are replaced by the same names fed by the EventLoopSampler (loopsampler.ts,
 * eventloopdelay.ts), which samples every 100 ms while the loop works and lets an idle one sleep.
 */
const PROM_CLIENT_MONITOR_PRECISION_MS = LONGEST_TIMER_MS;

/** prom-client's histogram gauges of the event-loop delay, as it names and aggregates them. */
const EVENT_LOOP_DELAY_GAUGES = [
  ['min', 'The minimum recorded event loop delay.', 'min'],
  ['max', 'The maximum recorded event loop delay.', 'max'],
  ['mean', 'The mean of the recorded event loop delays.', 'average'],
  ['stddev', 'The standard deviation of the recorded event loop delays.', 'average'],
  ['p50', 'The 50th percentile of the recorded event loop delays.', 'average'],
  ['p90', 'The 90th percentile of the recorded event loop delays.', 'average'],
  ['p99', 'The 99th percentile of the recorded event loop delays.', 'average'],
] as const satisfies readonly (readonly [keyof EventLoopDelayStats, string, Aggregator])[];

export interface MetricsOptions {
  /** Default: a new Registry (not prom-client's global one, so tests and tools stay isolated). */
  registry?: Registry;
  /**
   * Register prom-client's process_* and nodejs_* metrics (default true). Note that prom-client
   * starts a GC observer for them that cannot be stopped, and the event-loop delay gauges
   * subscribe to the sampler for good; neither keeps the process alive.
   */
  defaultMetrics?: boolean;
  /** The event-loop delay gauges' sampler; default the process's shared one. */
  eventLoopSampler?: EventLoopSampler;
}

/** Every metric the operator exports, registered on one Registry. */
export interface OperatorMetrics {
  readonly registry: Registry;
  readonly workqueue: WorkQueueMetricsProvider;
  readonly controller: ControllerMetrics;
  /** leader_election_master_status{name}: the hook for the elector contending for lease `name`. */
  leaderElection(name: string): LeaderElectionMetrics;
  /** informer_*{informer}: the hooks for the informer named `name` (e.g. "echos/default"). */
  readonly informer: (name: string) => InformerMetrics;
  /** client-go's rest_client_requests_total, rest_client_request_retries_total and rest_client_request_duration_seconds. */
  readonly rest: RestClientMetrics;
  /** echoperator_events_written_total{type} and echoperator_events_dropped_total{reason}. */
  readonly events: EventRecorderMetrics;
}

export function createMetrics(options: MetricsOptions = {}): OperatorMetrics {
  const registry = options.registry ?? new Registry();
  if (options.defaultMetrics ?? true) {
    collectDefaultMetrics({ register: registry, eventLoopMonitoringPrecision: PROM_CLIENT_MONITOR_PRECISION_MS });
    eventLoopDelayMetrics(registry, options.eventLoopSampler ?? sharedEventLoopSampler());
  }
  new Gauge({
    name: 'echoperator_build_info',
    help: 'Always 1; the version label tells which build is running.',
    labelNames: ['version'],
    registers: [registry],
  }).set({ version: VERSION }, 1);
  return {
    registry,
    workqueue: workQueueMetrics(registry),
    controller: controllerMetrics(registry),
    leaderElection: leaderElectionMetrics(registry),
    informer: informerMetrics(registry),
    rest: restClientMetrics(registry),
    events: eventRecorderMetrics(registry),
  };
}

/** nodejs_eventloop_lag_{min,...,p99}_seconds in place of prom-client's (see PROM_CLIENT_MONITOR_PRECISION_MS). */
function eventLoopDelayMetrics(registry: Registry, sampler: EventLoopSampler): void {
  const recorder = new EventLoopDelayRecorder(sampler.periodMs);
  sampler.subscribe(recorder.record);
  const gauges: { stat: keyof EventLoopDelayStats; gauge: Gauge }[] = [];
  // As prom-client did: the first gauge's collect sets them all from one read, once per scrape.
  const collectAll = (): void => {
    const stats = recorder.read();
    for (const { stat, gauge } of gauges) gauge.set(stats[stat]);
  };
  for (const [stat, help, aggregator] of EVENT_LOOP_DELAY_GAUGES) {
    const name = `nodejs_eventloop_lag_${stat}_seconds`;
    registry.removeSingleMetric(name);
    const collect = gauges.length === 0 ? collectAll : undefined;
    gauges.push({ stat, gauge: new Gauge({ name, help, aggregator, registers: [registry], collect }) });
  }
}

/**
 * Counters and gauges on `registry` that all carry `labelNames`: each metric then needs only its
 * name and help. Histograms and gauges computed at scrape time take more options and are made
 * with prom-client's constructors directly.
 */
function labelled<L extends string>(registry: Registry, labelNames: readonly L[]) {
  const registers = [registry];
  return {
    counter: (name: string, help: string): Counter<L> => new Counter({ name, help, labelNames, registers }),
    gauge: (name: string, help: string): Gauge<L> => new Gauge({ name, help, labelNames, registers }),
  };
}

/** client-go's rest_client_request_duration_seconds buckets (k8s.io/component-base's restclient metrics). */
export const REST_REQUEST_DURATION_BUCKETS = [0.005, 0.025, 0.1, 0.25, 0.5, 1, 2, 4, 8, 15, 30, 60] as const;

/** client-go's names and labels (without `host`: there is one API server). */
function restClientMetrics(registry: Registry): RestClientMetrics {
  const byCodeAndMethod = labelled(registry, ['code', 'method'] as const);
  const requests = byCodeAndMethod.counter('rest_client_requests_total', 'Number of HTTP requests, partitioned by status code and method.');
  const retries = byCodeAndMethod.counter(
    'rest_client_request_retries_total',
    'Number of request retries, partitioned by status code and method.',
  );
  const latency = new Histogram({
    name: 'rest_client_request_duration_seconds',
    help: 'Request latency in seconds. Broken down by verb.',
    labelNames: ['verb'] as const,
    buckets: [...REST_REQUEST_DURATION_BUCKETS],
    registers: [registry],
  });
  return {
    requestDone: (code, method) => requests.inc({ code, method }),
    retried: (code, method) => retries.inc({ code, method }),
    requestLatency: (verb, seconds) => latency.observe({ verb }, seconds),
  };
}

const EVENT_TYPES: readonly EventType[] = ['Normal', 'Warning'];

/**
 * The event recorder's outcomes (events/metrics.ts says what each reason means), every series
 * created at zero so that increase() sees the first drop of each reason.
 */
function eventRecorderMetrics(registry: Registry): EventRecorderMetrics {
  const written = labelled(registry, ['type'] as const).counter(
    'echoperator_events_written_total',
    'Kubernetes Events recorded and written to the API server (created, or an existing Event patched), by type; each occurrence counts.',
  );
  const dropped = labelled(registry, ['reason'] as const).counter(
    'echoperator_events_dropped_total',
    'Kubernetes Events recorded but never written, by reason: spam_filter (per-object rate limit, by design), queue_full, rejected, retries_exhausted, shutdown, invalid_object, internal_error.',
  );
  for (const type of EVENT_TYPES) written.inc({ type }, 0);
  for (const reason of EVENT_DROP_REASONS) dropped.inc({ reason }, 0);
  return {
    written: (type, count) => written.inc({ type }, count),
    dropped: (reason, count) => dropped.inc({ reason }, count),
  };
}

function workQueueMetrics(registry: Registry): WorkQueueMetricsProvider {
  const registers = [registry];
  const labelNames = ['name'] as const;
  // controller-runtime's priority queue labels its depth by priority; the wait time and the
  // longest current wait are labelled the same way, so a dashboard can tell a backlog of the
  // initial list (-100) from fresh events (0).
  const byPriority = ['name', 'priority'] as const;
  const probes = new Map<string, () => InFlightWork>();
  const depth = new Gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labelNames: byPriority, registers });
  const byName = labelled(registry, labelNames);
  const adds = byName.counter('workqueue_adds_total', 'Total number of adds handled by workqueue');
  const queueDuration = new Histogram({
    name: 'workqueue_queue_duration_seconds',
    help: 'How long in seconds an item stays in workqueue before being requested',
    labelNames: byPriority,
    buckets: [...WORKQUEUE_DURATION_BUCKETS],
    registers,
  });
  const workDuration = new Histogram({
    name: 'workqueue_work_duration_seconds',
    help: 'How long in seconds processing an item from workqueue takes.',
    labelNames,
    buckets: [...WORKQUEUE_DURATION_BUCKETS],
    registers,
  });
  const retries = byName.counter('workqueue_retries_total', 'Total number of retries handled by workqueue');
  // Ours (neither client-go nor controller-runtime has it): the keys waiting out a backoff or a
  // requeue-after, which workqueue_depth leaves out; with depth and in-flight work at 0 it says
  // that no retry is still due.
  const delayedDepth = byName.gauge(
    'workqueue_delayed_depth',
    'Current number of keys waiting out a delay (a retry backoff or a requeue-after) before they are added to workqueue',
  );
  // The two in-flight gauges read the queues' probes when scraped (see workqueue/metrics.ts).
  new Gauge({
    name: 'workqueue_unfinished_work_seconds',
    help:
      "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. " +
      'Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.',
    labelNames,
    registers,
    collect() {
      for (const [name, probe] of probes) this.set({ name }, probe().unfinishedWorkSeconds);
    },
  });
  new Gauge({
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    labelNames,
    registers,
    collect() {
      for (const [name, probe] of probes) this.set({ name }, probe().longestRunningProcessorSeconds);
    },
  });
  new Gauge({
    name: 'workqueue_longest_waiting_seconds',
    help: 'How many seconds the key that has waited longest in workqueue, of each priority, has been waiting to be handed out.',
    labelNames: byPriority,
    registers,
    collect() {
      for (const [name, probe] of probes) {
        for (const [priority, seconds] of probe().longestWaitingSeconds ?? []) this.set({ name, priority: String(priority) }, seconds);
      }
    },
  });

  return {
    forQueue(name, inFlight): WorkQueueMetrics {
      probes.set(name, inFlight);
      const labels = { name };
      // Created at zero so a queue that never retried still has a series.
      depth.set({ name, priority: '0' }, 0);
      adds.inc(labels, 0);
      retries.inc(labels, 0);
      delayedDepth.set(labels, 0);
      return {
        setDepth: (keys, priority) => depth.set({ name, priority: String(priority) }, keys),
        incAdds: () => adds.inc(labels),
        observeQueueDuration: (s, priority) => queueDuration.observe({ name, priority: String(priority) }, s),
        observeWorkDuration: (s) => workDuration.observe(labels, s),
        incRetries: () => retries.inc(labels),
        setDelayedDepth: (keys) => delayedDepth.set(labels, keys),
      };
    },
  };
}

function controllerMetrics(registry: Registry): ControllerMetrics {
  const byController = labelled(registry, ['controller'] as const);
  const total = labelled(registry, ['controller', 'result'] as const).counter(
    'controller_runtime_reconcile_total',
    'Total number of reconciliations per controller',
  );
  const errors = byController.counter('controller_runtime_reconcile_errors_total', 'Total number of reconciliation errors per controller');
  const terminal = byController.counter(
    'controller_runtime_terminal_reconcile_errors_total',
    'Total number of terminal reconciliation errors per controller',
  );
  const time = new Histogram({
    name: 'controller_runtime_reconcile_time_seconds',
    help: 'Length of time per reconciliation per controller',
    labelNames: ['controller'] as const,
    buckets: [...RECONCILE_TIME_BUCKETS],
    registers: [registry],
  });
  const maxConcurrent = byController.gauge(
    'controller_runtime_max_concurrent_reconciles',
    'Maximum number of concurrent reconciles per controller',
  );
  const active = byController.gauge('controller_runtime_active_workers', 'Number of currently used workers per controller');
  return {
    setMaxConcurrency(controller, workers) {
      maxConcurrent.set({ controller }, workers);
      active.inc({ controller }, 0);
      errors.inc({ controller }, 0);
      terminal.inc({ controller }, 0);
      for (const result of RESULTS) total.inc({ controller, result }, 0);
    },
    activeWorkers(controller, delta) {
      active.inc({ controller }, delta);
    },
    reconciled(controller, result, seconds) {
      total.inc({ controller, result });
      if (result === 'error') errors.inc({ controller });
      time.observe({ controller }, seconds);
    },
    terminalError(controller) {
      terminal.inc({ controller });
    },
  };
}

function leaderElectionMetrics(registry: Registry): (name: string) => LeaderElectionMetrics {
  const status = new Gauge({
    name: 'leader_election_master_status',
    help:
      'Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. ' +
      "'name' is the string used to identify the lease. Please make sure to group by name.",
    labelNames: ['name'] as const,
    registers: [registry],
  });
  return (name) => {
    status.set({ name }, 0);
    return { setLeader: (isLeader) => status.set({ name }, isLeader ? 1 : 0) };
  };
}

/**
 * The informers' list/watch counters (reflector.ts documents each), labelled by informer name:
 * re-lists and watch errors by reason show a flapping or expiring watch, which logs alone hide.
 */
function informerMetrics(registry: Registry): (name: string) => InformerMetrics {
  const byInformer = labelled(registry, ['informer'] as const);
  const byReason = labelled(registry, ['informer', 'reason'] as const);
  const lists = byInformer.counter('informer_list_requests_total', 'LIST requests (pages) sent by an informer');
  const listErrors = byInformer.counter('informer_list_errors_total', 'Lists that failed and will be retried after backoff');
  const relists = byInformer.counter('informer_relists_total', 'Lists after the first successful one (a watch expired: 410 Gone)');
  const watches = byInformer.counter('informer_watches_total', 'WATCH requests opened by an informer');
  const watchErrors = byReason.counter(
    'informer_watch_errors_total',
    'Watches that ended abnormally, by reason: gone (410, re-list), error (backoff), inactive (watchdog), short (ended at once), undecodable (an event that did not decode; backoff, re-watch from the last applied event)',
  );
  const malformed = byReason.counter(
    'informer_malformed_events_total',
    'Malformed watch events and listed items, by reason: unparseable, no-object, unknown-type (a watch event of these ends the watch), no-name, wrong-kind (skipped)',
  );
  return (informer) => {
    const labels = { informer };
    // Created at zero, so increase() and absent() work from the first scrape.
    for (const c of [lists, listErrors, relists, watches]) c.inc(labels, 0);
    for (const reason of WATCH_ERROR_REASONS) watchErrors.inc({ informer, reason }, 0);
    for (const reason of MALFORMED_REASONS) malformed.inc({ informer, reason }, 0);
    return {
      listRequest: () => lists.inc(labels),
      listError: () => listErrors.inc(labels),
      relist: () => relists.inc(labels),
      watchStarted: () => watches.inc(labels),
      watchError: (reason) => watchErrors.inc({ informer, reason }),
      malformedEvent: (reason) => malformed.inc({ informer, reason }),
    };
  };
}
