import assert from 'node:assert/strict';
import perfHooks from 'node:perf_hooks';
import { describe, it, mock } from 'node:test';
import type { Registry } from 'prom-client';
import { FakeClock, flushMicrotasks } from '../../src/runtime/testing/clock.js';
import { newRateLimitingQueue } from '../../src/runtime/workqueue/index.js';
import { EventLoopSampler } from '../../src/observability/loopsampler.js';
import { LONGEST_TIMER_MS } from '../../src/runtime/clock.js';
import { fakeLoop } from '../support/eventloop.js';
import { RECONCILE_TIME_BUCKETS, WORKQUEUE_DURATION_BUCKETS, createMetrics } from '../../src/observability/metrics.js';
import { VERSION } from '../../src/version.js';

type Labels = Record<string, string | number>;

/** The value of one series; histograms by their _count / _sum / _bucket sample name. */
async function sample(registry: Registry, name: string, labels: Labels, sampleName = name): Promise<number | undefined> {
  const metricName = sampleName.replace(/_(count|sum|bucket)$/, '');
  const metric = registry.getSingleMetric(name === sampleName ? name : metricName);
  assert.ok(metric, `${name} is registered`);
  const { values } = await metric.get();
  const found = values.find(
    (v) =>
      ((v as { metricName?: string }).metricName ?? name) === sampleName &&
      Object.entries(labels).every(([k, want]) => String(v.labels[k]) === String(want)),
  );
  return found?.value;
}

describe('metrics: work queue', () => {
  it('moves depth, adds, durations and retries as a real queue works, labelled by queue name', async () => {
    const clock = new FakeClock();
    const m = createMetrics({ defaultMetrics: false });
    const queue = newRateLimitingQueue({ name: 'echo', clock, metrics: m.workqueue });
    const r = m.registry;
    const q = { name: 'echo' };
    assert.equal(await sample(r, 'workqueue_adds_total', q), 0, 'series exist from the start');
    assert.equal(await sample(r, 'workqueue_retries_total', q), 0);

    queue.add('ns/a');
    queue.add('ns/a'); // already waiting: not an add
    queue.add('ns/b');
    assert.equal(await sample(r, 'workqueue_adds_total', q), 2);
    assert.equal(await sample(r, 'workqueue_depth', q), 2);

    await clock.step(1500);
    const item = await queue.get();
    assert.equal(item?.key, 'ns/a');
    assert.equal(await sample(r, 'workqueue_depth', q), 1);
    assert.equal(await sample(r, 'workqueue_queue_duration_seconds', q, 'workqueue_queue_duration_seconds_count'), 1);
    assert.equal(await sample(r, 'workqueue_queue_duration_seconds', q, 'workqueue_queue_duration_seconds_sum'), 1.5);

    await clock.step(2000);
    // In flight for 2 s: computed at scrape time, no tick needed.
    assert.equal(await sample(r, 'workqueue_longest_running_processor_seconds', q), 2);
    assert.equal(await sample(r, 'workqueue_unfinished_work_seconds', q), 2);
    assert.equal(await sample(r, 'workqueue_delayed_depth', q), 0);
    queue.addRateLimited('ns/a');
    assert.equal(await sample(r, 'workqueue_delayed_depth', q), 1, 'waiting out its backoff');
    queue.done('ns/a');
    assert.equal(await sample(r, 'workqueue_retries_total', q), 1);
    assert.equal(await sample(r, 'workqueue_work_duration_seconds', q, 'workqueue_work_duration_seconds_count'), 1);
    assert.equal(await sample(r, 'workqueue_work_duration_seconds', q, 'workqueue_work_duration_seconds_sum'), 2);
    assert.equal(await sample(r, 'workqueue_longest_running_processor_seconds', q), 0);
    assert.equal(await sample(r, 'workqueue_work_duration_seconds', { ...q, le: 10 }, 'workqueue_work_duration_seconds_bucket'), 1);
    assert.equal(await sample(r, 'workqueue_work_duration_seconds', { ...q, le: 1 }, 'workqueue_work_duration_seconds_bucket'), 0);
    await clock.step(5);
    assert.equal(await sample(r, 'workqueue_delayed_depth', q), 0, 'added once its backoff passed');
    queue.shutDown();
    await flushMicrotasks();
  });

  it("uses controller-runtime's exponential duration buckets, 10 ns to 1000 s", async () => {
    assert.deepEqual(
      [...WORKQUEUE_DURATION_BUCKETS],
      Array.from({ length: 12 }, (_, i) => Number(`1e${i - 8}`)),
    );
    const m = createMetrics({ defaultMetrics: false });
    m.workqueue.forQueue('q', () => ({ unfinishedWorkSeconds: 0, longestRunningProcessorSeconds: 0 })).observeQueueDuration(0.001, 0);
    const text = await m.registry.metrics();
    assert.match(text, /workqueue_queue_duration_seconds_bucket\{le="1e-8",name="q",priority="0"\} 0/);
    assert.match(text, /workqueue_queue_duration_seconds_bucket\{le="1000",name="q",priority="0"\} 1/);
  });
});

describe('metrics: controller', () => {
  it('counts reconciles by result, errors, time and workers under controller-runtime names', async () => {
    const m = createMetrics({ defaultMetrics: false });
    const r = m.registry;
    const c = { controller: 'echo' };
    m.controller.setMaxConcurrency('echo', 4);
    assert.equal(await sample(r, 'controller_runtime_max_concurrent_reconciles', c), 4);
    for (const result of ['success', 'error', 'requeue', 'requeue_after']) {
      assert.equal(await sample(r, 'controller_runtime_reconcile_total', { ...c, result }), 0, `${result} starts at 0`);
    }
    assert.equal(await sample(r, 'controller_runtime_reconcile_errors_total', c), 0);
    assert.equal(await sample(r, 'controller_runtime_terminal_reconcile_errors_total', c), 0);
    assert.equal(await sample(r, 'controller_runtime_active_workers', c), 0);

    m.controller.activeWorkers('echo', 1);
    m.controller.activeWorkers('echo', 1);
    m.controller.reconciled('echo', 'success', 0.02);
    m.controller.reconciled('echo', 'error', 0.3);
    m.controller.reconciled('echo', 'requeue_after', 0.004);
    m.controller.reconciled('echo', 'error', 0.001);
    m.controller.terminalError('echo');
    m.controller.activeWorkers('echo', -1);

    assert.equal(await sample(r, 'controller_runtime_active_workers', c), 1);
    assert.equal(await sample(r, 'controller_runtime_reconcile_total', { ...c, result: 'success' }), 1);
    assert.equal(await sample(r, 'controller_runtime_reconcile_total', { ...c, result: 'error' }), 2);
    assert.equal(await sample(r, 'controller_runtime_reconcile_total', { ...c, result: 'requeue_after' }), 1);
    assert.equal(await sample(r, 'controller_runtime_reconcile_errors_total', c), 2);
    assert.equal(await sample(r, 'controller_runtime_terminal_reconcile_errors_total', c), 1);
    assert.equal(await sample(r, 'controller_runtime_reconcile_time_seconds', c, 'controller_runtime_reconcile_time_seconds_count'), 4);
    assert.equal(
      await sample(r, 'controller_runtime_reconcile_time_seconds', { ...c, le: 0.005 }, 'controller_runtime_reconcile_time_seconds_bucket'),
      2,
    );
    assert.equal(
      await sample(r, 'controller_runtime_reconcile_time_seconds', { ...c, le: 0.3 }, 'controller_runtime_reconcile_time_seconds_bucket'),
      4,
    );
    assert.equal(
      await sample(r, 'controller_runtime_reconcile_time_seconds', { ...c, le: 0.25 }, 'controller_runtime_reconcile_time_seconds_bucket'),
      3,
    );
  });

  it("uses controller-runtime's reconcile time buckets, 5 ms to 60 s", () => {
    assert.equal(RECONCILE_TIME_BUCKETS.length, 40);
    assert.equal(RECONCILE_TIME_BUCKETS[0], 0.005);
    assert.equal(RECONCILE_TIME_BUCKETS.at(-1), 60);
  });
});

describe('metrics: leader election and process', () => {
  it('reports leader_election_master_status per lease name, 0 until leading', async () => {
    const m = createMetrics({ defaultMetrics: false });
    const hook = m.leaderElection('echoperator');
    assert.equal(await sample(m.registry, 'leader_election_master_status', { name: 'echoperator' }), 0);
    hook.setLeader(true);
    assert.equal(await sample(m.registry, 'leader_election_master_status', { name: 'echoperator' }), 1);
    hook.setLeader(false);
    assert.equal(await sample(m.registry, 'leader_election_master_status', { name: 'echoperator' }), 0);
  });

  it('exports the names dashboards expect, process metrics and build info', async () => {
    const m = createMetrics();
    m.workqueue.forQueue('echo', () => ({ unfinishedWorkSeconds: 0, longestRunningProcessorSeconds: 0 }));
    m.controller.setMaxConcurrency('echo', 1);
    m.leaderElection('echoperator');
    const text = await m.registry.metrics();
    const names = new Set([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((x) => `${x[1]} ${x[2]}`));
    for (const expected of [
      'controller_runtime_reconcile_total counter',
      'controller_runtime_reconcile_errors_total counter',
      'controller_runtime_terminal_reconcile_errors_total counter',
      'controller_runtime_reconcile_time_seconds histogram',
      'controller_runtime_active_workers gauge',
      'controller_runtime_max_concurrent_reconciles gauge',
      'workqueue_depth gauge',
      'workqueue_adds_total counter',
      'workqueue_queue_duration_seconds histogram',
      'workqueue_work_duration_seconds histogram',
      'workqueue_retries_total counter',
      'workqueue_delayed_depth gauge',
      'workqueue_unfinished_work_seconds gauge',
      'workqueue_longest_running_processor_seconds gauge',
      'leader_election_master_status gauge',
      'process_cpu_seconds_total counter',
      'process_resident_memory_bytes gauge',
      'process_start_time_seconds gauge',
      'nodejs_eventloop_lag_seconds gauge',
    ]) {
      assert.ok(names.has(expected), `exports ${expected}`);
    }
    assert.ok(text.includes(`echoperator_build_info{version="${VERSION}"} 1`));
  });

  it("leaves prom-client's own event-loop monitor (a timer that wakes an idle process) unsampled, and feeds its seven gauges from the sampler", async () => {
    const monitor = mock.method(perfHooks, 'monitorEventLoopDelay');
    const clock = new FakeClock();
    const loop = fakeLoop(clock);
    // Every 100 ms, idle or not, so that each tick is one sample.
    const sampler = new EventLoopSampler({ clock, loopTimes: loop.loopTimes, periodMs: 100, idlePeriodMs: 100 });
    try {
      const { registry } = createMetrics({ eventLoopSampler: sampler });
      assert.equal(monitor.mock.callCount(), 1);
      assert.deepEqual(monitor.mock.calls[0]!.arguments, [{ resolution: LONGEST_TIMER_MS }], 'its first sample 24.8 days away');
      await loop.idle(1000);
      loop.block(250); // the next tick runs 150 ms late: 250 ms after the previous one
      await clock.step(0);
      const text = await registry.metrics();
      const value = (stat: string): number => Number(new RegExp(`^nodejs_eventloop_lag_${stat}_seconds (\\S+)$`, 'm').exec(text)?.[1]);
      for (const stat of ['min', 'max', 'mean', 'stddev', 'p50', 'p90', 'p99'])
        assert.equal(text.match(new RegExp(`^# TYPE nodejs_eventloop_lag_${stat}_seconds gauge$`, 'gm'))?.length, 1, `${stat} once`);
      assert.ok(Math.abs(value('min') - 0.1) < 1e-3, `min ${value('min')}`);
      assert.ok(Math.abs(value('p50') - 0.1) < 1e-3, `p50 ${value('p50')}`);
      assert.ok(Math.abs(value('max') - 0.25) < 1e-3, `max ${value('max')}`);
      assert.ok(Number.isFinite(value('mean')) && Number.isFinite(value('stddev')) && value('p99') >= value('p90'));
      assert.match(text, /^nodejs_eventloop_lag_seconds \S+$/m, "the lag measured at scrape is still prom-client's");
    } finally {
      monitor.mock.restore();
    }
  });

  it('keeps registries apart, so two sets of metrics in one process do not collide', () => {
    assert.doesNotThrow(() => {
      createMetrics({ defaultMetrics: false });
      createMetrics({ defaultMetrics: false });
    });
  });
});

describe('metrics: informers', () => {
  it('counts lists, re-lists, watches and watch errors by reason, per informer, from zero', async () => {
    const m = createMetrics({ defaultMetrics: false });
    const r = m.registry;
    const echos = m.informer('echos/default');
    const jobs = m.informer('jobs/default');
    const e = { informer: 'echos/default' };
    assert.equal(await sample(r, 'informer_relists_total', e), 0, 'series exist from the start');
    assert.equal(await sample(r, 'informer_watch_errors_total', { ...e, reason: 'gone' }), 0);
    echos.listRequest();
    echos.listRequest();
    echos.watchStarted();
    echos.watchError('gone');
    echos.relist();
    echos.listError();
    jobs.watchError('inactive');
    assert.equal(await sample(r, 'informer_list_requests_total', e), 2);
    assert.equal(await sample(r, 'informer_watches_total', e), 1);
    assert.equal(await sample(r, 'informer_relists_total', e), 1);
    assert.equal(await sample(r, 'informer_list_errors_total', e), 1);
    assert.equal(await sample(r, 'informer_watch_errors_total', { ...e, reason: 'gone' }), 1);
    assert.equal(await sample(r, 'informer_watch_errors_total', { ...e, reason: 'inactive' }), 0);
    assert.equal(await sample(r, 'informer_watch_errors_total', { informer: 'jobs/default', reason: 'inactive' }), 1);
    assert.equal(await sample(r, 'informer_relists_total', { informer: 'jobs/default' }), 0);
  });
});
