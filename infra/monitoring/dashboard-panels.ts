/**
 * What the dashboard shows: its rows and panels as data (title, description, unit, PromQL with
 * legends), which dashboard.ts turns into Grafana's JSON with the SDK's builders.
 *
 * Every query selects the operator's series with DASHBOARD_SELECTOR and uses no template variable
 * but `$namespace`, `$job`, `$__rate_interval` and `$__range`. Legends name the pod where replicas
 * differ (the leader's queues and workers, each process), and aggregate over pods where only the
 * leader reports (reconciles, API requests, Events). Names are controller-runtime's and
 * client-go's (src/observability/metrics.ts), so these panels read the same as a Go operator's.
 */
import * as units from '@grafana/grafana-foundation-sdk/units';

/** The operator's scrape targets, as the `namespace` and `job` variables choose them. */
export const DASHBOARD_SELECTOR = 'namespace="$namespace", job="$job"';

export interface PanelQuery {
  expr: string;
  /** Grafana's legendFormat: `{{label}}` is the series' label. */
  legend: string;
}

export interface PanelSpec {
  title: string;
  description: string;
  /** A Grafana unit id (@grafana/grafana-foundation-sdk/units). */
  unit: string;
  queries: PanelQuery[];
  /** Of the row's 24 grid columns. */
  width: number;
  height?: number;
  /** timeseries (the default), stat (one figure), or state (leader/standby over time). */
  kind?: 'timeseries' | 'stat' | 'state';
  axisLabel?: string;
  /** Draw bars: counts of discrete happenings, such as leader transitions. */
  bars?: boolean;
  /** Stat panels: colour of the lowest values and the steps above (value, colour). */
  thresholds?: { base: string; steps: [number, string][] };
  /** Stat panels: the text shown when the query returns nothing. */
  noValue?: string;
}

export interface RowSpec {
  title: string;
  panels: PanelSpec[];
}

/** `metric{namespace="$namespace", job="$job"}`. */
const series = (metric: string): string => `${metric}{${DASHBOARD_SELECTOR}}`;
/** Per-second rate of a counter (or a histogram's buckets) over Grafana's rate interval. */
const rate = (metric: string): string => `rate(${series(metric)}[$__rate_interval])`;
/** `sum by (labels) (rate(metric))`. */
const rateBy = (by: string, metric: string): string => `sum by (${by}) (${rate(metric)})`;

/**
 * The median and the 99th percentile of a histogram, per `by` (a label list), each legended as
 * `legend` followed by p50 or p99.
 */
function quantiles(histogram: string, by: string, legend: string): PanelQuery[] {
  return [0.5, 0.99].map((q) => ({
    expr: `histogram_quantile(${q}, sum by (${by}, le) (${rate(`${histogram}_bucket`)}))`,
    legend: `${legend} p${Math.round(q * 100)}`,
  }));
}

const overview: RowSpec = {
  title: 'Overview',
  panels: [
    {
      title: 'Pods by version',
      kind: 'stat',
      width: 6,
      height: 5,
      unit: units.Short,
      description: 'Replicas scraped, by the version they run (echoperator_build_info). Two versions at once is a rollout in progress.',
      queries: [{ expr: `count by (version) (${series('echoperator_build_info')})`, legend: '{{version}}' }],
      noValue: 'no pod scraped',
      thresholds: { base: 'red', steps: [[1, 'green']] },
    },
    {
      title: 'Leaders',
      kind: 'stat',
      width: 6,
      height: 5,
      unit: units.Short,
      description:
        'Replicas that report themselves leader of the Lease (leader_election_master_status). Exactly 1 is healthy: 0 means nothing reconciles, 2 or more a split brain. Empty without leader election (ha.enabled false).',
      queries: [{ expr: `sum(${series('leader_election_master_status')})`, legend: 'leaders' }],
      noValue: 'no leader election',
      thresholds: {
        base: 'red',
        steps: [
          [1, 'green'],
          [2, 'red'],
        ],
      },
    },
    {
      title: 'Reconcile errors in range',
      kind: 'stat',
      width: 6,
      height: 5,
      unit: units.Short,
      description: 'Reconciles that returned an error (and were retried with backoff) over the time range, all controllers.',
      queries: [{ expr: `sum(increase(${series('controller_runtime_reconcile_errors_total')}[$__range]))`, legend: 'errors' }],
      thresholds: { base: 'green', steps: [[1, 'orange']] },
    },
    {
      title: 'Terminal errors in range',
      kind: 'stat',
      width: 6,
      height: 5,
      unit: units.Short,
      description:
        'Reconciles that ended in a terminal error over the time range: the object is marked Stalled and not retried until it changes. See the runbook of EchoperatorObjectsStalled.',
      queries: [
        { expr: `sum(increase(${series('controller_runtime_terminal_reconcile_errors_total')}[$__range]))`, legend: 'terminal errors' },
      ],
      thresholds: { base: 'green', steps: [[1, 'red']] },
    },
  ],
};

const reconciles: RowSpec = {
  title: 'Reconciles by controller',
  panels: [
    {
      title: 'Reconciles by result',
      width: 12,
      unit: units.OpsPerSecond,
      description:
        'Reconciles per second by controller and result (controller_runtime_reconcile_total): success, error (retried with backoff), requeue, requeue_after. Only the leader reconciles.',
      queries: [{ expr: rateBy('controller, result', 'controller_runtime_reconcile_total'), legend: '{{controller}} {{result}}' }],
    },
    {
      title: 'Reconcile errors',
      width: 12,
      unit: units.OpsPerSecond,
      description:
        'Errors per second by controller: retried errors (controller_runtime_reconcile_errors_total) and terminal errors (controller_runtime_terminal_reconcile_errors_total), which mark the object Stalled instead of retrying.',
      queries: [
        { expr: rateBy('controller', 'controller_runtime_reconcile_errors_total'), legend: '{{controller}} errors' },
        { expr: rateBy('controller', 'controller_runtime_terminal_reconcile_errors_total'), legend: '{{controller}} terminal' },
      ],
    },
    {
      title: 'Reconcile latency',
      width: 12,
      unit: units.Seconds,
      description:
        'How long one reconcile takes, median and 99th percentile by controller (controller_runtime_reconcile_time_seconds). Empty while nothing is reconciled.',
      queries: quantiles('controller_runtime_reconcile_time_seconds', 'controller', '{{controller}}'),
    },
    {
      title: 'Workers in use',
      width: 12,
      unit: units.Short,
      description:
        'Reconciles running now, by pod and controller (controller_runtime_active_workers), against each controller’s concurrency (controller_runtime_max_concurrent_reconciles). Always at the maximum: the workers are the bottleneck.',
      queries: [
        { expr: `sum by (pod, controller) (${series('controller_runtime_active_workers')})`, legend: '{{pod}} {{controller}} active' },
        { expr: `max by (controller) (${series('controller_runtime_max_concurrent_reconciles')})`, legend: '{{controller}} max' },
      ],
    },
  ],
};

const queues: RowSpec = {
  title: 'Work queues by priority',
  panels: [
    {
      title: 'Queue depth by priority',
      width: 8,
      unit: units.Short,
      description:
        'Keys waiting in each controller’s queue, by pod and priority (workqueue_depth): -100 is the initial list’s backlog, 0 fresh events. A depth that only grows means the workers cannot keep up.',
      queries: [{ expr: `sum by (pod, name, priority) (${series('workqueue_depth')})`, legend: '{{pod}} {{name}} priority {{priority}}' }],
    },
    {
      title: 'Queue wait by priority',
      width: 8,
      unit: units.Seconds,
      description:
        'How long a key waits in the queue before a worker takes it, median and 99th percentile by queue and priority (workqueue_queue_duration_seconds).',
      queries: quantiles('workqueue_queue_duration_seconds', 'name, priority', '{{name}} priority {{priority}}'),
    },
    {
      title: 'Work duration',
      width: 8,
      unit: units.Seconds,
      description: 'How long a worker holds a key, median and 99th percentile by queue (workqueue_work_duration_seconds).',
      queries: quantiles('workqueue_work_duration_seconds', 'name', '{{name}}'),
    },
    {
      title: 'Longest waiting by priority',
      width: 8,
      unit: units.Seconds,
      description:
        'Age of the oldest key still waiting, by pod, queue and priority (workqueue_longest_waiting_seconds). A steady climb is a stuck queue: see EchoperatorWorkQueueStuck.',
      queries: [
        {
          expr: `max by (pod, name, priority) (${series('workqueue_longest_waiting_seconds')})`,
          legend: '{{pod}} {{name}} priority {{priority}}',
        },
      ],
    },
    {
      title: 'Unfinished work',
      width: 8,
      unit: units.Seconds,
      description:
        'Seconds of work in progress not yet done (workqueue_unfinished_work_seconds) and the longest-running worker (workqueue_longest_running_processor_seconds), by pod and queue. Growing without bound means stuck workers.',
      queries: [
        { expr: `max by (pod, name) (${series('workqueue_unfinished_work_seconds')})`, legend: '{{pod}} {{name}} unfinished' },
        {
          expr: `max by (pod, name) (${series('workqueue_longest_running_processor_seconds')})`,
          legend: '{{pod}} {{name}} longest running',
        },
      ],
    },
    {
      title: 'Adds and retries',
      width: 8,
      unit: units.OpsPerSecond,
      description: 'Keys added per second (workqueue_adds_total) and keys re-queued after an error (workqueue_retries_total), by queue.',
      queries: [
        { expr: rateBy('name', 'workqueue_adds_total'), legend: '{{name}} adds' },
        { expr: rateBy('name', 'workqueue_retries_total'), legend: '{{name}} retries' },
      ],
    },
  ],
};

const leader: RowSpec = {
  title: 'Leader election',
  panels: [
    {
      title: 'Leader by pod',
      kind: 'state',
      width: 16,
      unit: units.Short,
      description:
        'Which replica holds the Lease over time (leader_election_master_status: leader or standby). Empty without leader election (ha.enabled false).',
      queries: [{ expr: `max by (pod) (${series('leader_election_master_status')})`, legend: '{{pod}}' }],
    },
    {
      title: 'Leader transitions',
      width: 8,
      unit: units.Short,
      bars: true,
      axisLabel: 'changes',
      description:
        'Changes of each replica’s leader status within each interval (changes() of leader_election_master_status): a hand-over shows on the old and the new leader. Frequent changes mean the Lease is lost and retaken: check the API server’s latency and the renew deadline.',
      queries: [{ expr: `sum by (pod) (changes(${series('leader_election_master_status')}[$__rate_interval]))`, legend: '{{pod}}' }],
    },
  ],
};

const api: RowSpec = {
  title: 'API server requests',
  panels: [
    {
      title: 'API requests by verb and code',
      width: 12,
      unit: units.RequestsPerSecond,
      description:
        'Requests to the Kubernetes API server per second, by HTTP method and status code (rest_client_requests_total; code <error> when no answer came). Watches count when they open.',
      queries: [{ expr: rateBy('method, code', 'rest_client_requests_total'), legend: '{{method}} {{code}}' }],
    },
    {
      title: 'API request latency by verb',
      width: 12,
      unit: units.Seconds,
      description:
        'Time to an API server’s answer, median and 99th percentile by verb (rest_client_request_duration_seconds, client-go’s name).',
      queries: quantiles('rest_client_request_duration_seconds', 'verb', '{{verb}}'),
    },
  ],
};

const events: RowSpec = {
  title: 'Events',
  panels: [
    {
      title: 'Events written by type',
      width: 12,
      unit: units.OpsPerSecond,
      description: 'Kubernetes Events the operator wrote per second, Normal or Warning (echoperator_events_written_total).',
      queries: [{ expr: rateBy('type', 'echoperator_events_written_total'), legend: '{{type}}' }],
    },
    {
      title: 'Events dropped by reason',
      width: 12,
      unit: units.OpsPerSecond,
      description:
        'Events the operator gave up on per second, by reason (echoperator_events_dropped_total): the objects’ history then misses them. See EchoperatorEventsDropped.',
      queries: [{ expr: rateBy('reason', 'echoperator_events_dropped_total'), legend: '{{reason}}' }],
    },
  ],
};

const processRow: RowSpec = {
  title: 'Process',
  panels: [
    {
      title: 'CPU by pod',
      width: 8,
      unit: units.Short,
      axisLabel: 'cores',
      description: 'CPU used, in cores, by pod (process_cpu_seconds_total, user and system).',
      queries: [{ expr: `sum by (pod) (${rate('process_cpu_seconds_total')})`, legend: '{{pod}}' }],
    },
    {
      title: 'Resident memory by pod',
      width: 8,
      unit: units.BytesIEC,
      description: 'Resident set size by pod (process_resident_memory_bytes), to compare with the container’s memory limit.',
      queries: [{ expr: `sum by (pod) (${series('process_resident_memory_bytes')})`, legend: '{{pod}}' }],
    },
    {
      title: 'Event-loop delay by pod',
      width: 8,
      unit: units.Seconds,
      description:
        'The 99th percentile of the Node.js event loop’s delay by pod (nodejs_eventloop_lag_p99_seconds): every reconcile, watch and scrape of that pod waits this long.',
      queries: [{ expr: `max by (pod) (${series('nodejs_eventloop_lag_p99_seconds')})`, legend: '{{pod}}' }],
    },
  ],
};

/** The dashboard's rows, top to bottom. */
export const DASHBOARD_ROWS: readonly RowSpec[] = [overview, reconciles, queues, leader, api, events, processRow];
