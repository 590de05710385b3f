import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/kube/errors.js';
import { FakeClock, flushMicrotasks } from '../../src/runtime/testing/clock.js';
import type { LogFields, Logger } from '../../src/runtime/log.js';
import { LruMap, SimilarEventAggregator, SpamFilter } from '../../src/observability/events/correlation.js';
import {
  KubeEventRecorder,
  restEventSink,
  type CoreEvent,
  type EventCountPatch,
  type EventRecorderOptions,
  type EventSink,
  EVENT_DROP_REASONS,
  type EventRecorderMetrics,
} from '../../src/observability/events/index.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { metricSample } from '../support/http.js';
import { nopEventRecorder, type EventSubject } from '../../src/runtime/events.js';
import { FakeEventRecorder } from '../../src/runtime/testing/events.js';

type Call = { op: 'create'; event: CoreEvent } | { op: 'patch'; namespace: string; name: string; patch: EventCountPatch };

/** An API server stand-in: records calls, fails the next calls as told, or holds them until released. */
class FakeSink implements EventSink {
  readonly calls: Call[] = [];
  readonly failures: unknown[] = [];
  hold = false;
  /** With a clock: every answer takes this long (an API server at its write rate). */
  latency: { clock: FakeClock; ms: number } | undefined;
  /** Most writes seen in flight at once. */
  maxInFlight = 0;
  private inFlight = 0;
  private held: (() => void)[] = [];

  async create(event: CoreEvent, signal: AbortSignal): Promise<void> {
    await this.answer(signal);
    this.calls.push({ op: 'create', event: structuredClone(event) });
  }

  async patch(namespace: string, name: string, patch: EventCountPatch, signal: AbortSignal): Promise<void> {
    await this.answer(signal);
    this.calls.push({ op: 'patch', namespace, name, patch: { ...patch } });
  }

  release(): void {
    this.hold = false;
    for (const r of this.held.splice(0)) r();
  }

  get creates(): CoreEvent[] {
    return this.calls.flatMap((c) => (c.op === 'create' ? [c.event] : []));
  }

  get patches(): EventCountPatch[] {
    return this.calls.flatMap((c) => (c.op === 'patch' ? [c.patch] : []));
  }

  private async answer(signal: AbortSignal): Promise<void> {
    this.maxInFlight = Math.max(this.maxInFlight, ++this.inFlight);
    try {
      await this.wait(signal);
    } finally {
      this.inFlight--;
    }
  }

  private async wait(signal: AbortSignal): Promise<void> {
    if (this.latency) {
      await this.latency.clock.sleep(this.latency.ms, signal).catch(() => {
        throw new ApiError(0, 'TransportError', 'aborted');
      });
    }
    if (this.hold) {
      await new Promise<void>((resolve, reject) => {
        this.held.push(resolve);
        signal.addEventListener('abort', () => reject(new ApiError(0, 'TransportError', 'aborted')), { once: true });
      });
    }
    if (this.failures.length > 0) throw this.failures.shift();
  }
}

class CapturingLogger implements Logger {
  readonly lines: { level: string; msg: string; fields: LogFields }[] = [];
  debug = (msg: string, fields: LogFields = {}) => this.lines.push({ level: 'debug', msg, fields });
  info = (msg: string, fields: LogFields = {}) => this.lines.push({ level: 'info', msg, fields });
  warn = (msg: string, fields: LogFields = {}) => this.lines.push({ level: 'warn', msg, fields });
  error = (msg: string, fields: LogFields = {}) => this.lines.push({ level: 'error', msg, fields });
  child = () => this;
}

const START = Date.parse('2025-06-01T12:00:00Z');

function setup(options: Partial<EventRecorderOptions> = {}) {
  const clock = new FakeClock();
  const sink = new FakeSink();
  const logger = new CapturingLogger();
  const recorder = new KubeEventRecorder({
    sink,
    clock,
    wallClock: () => new Date(START + clock.now()),
    logger,
    instance: 'pod-1_abcd',
    random: () => 0.5,
    ...options,
  });
  return { clock, sink, logger, recorder };
}

/** Once the recorder's writes reached the holding sink, lets it answer them and waits until everything was sent. */
async function releaseAndFlush(sink: FakeSink, recorder: KubeEventRecorder): Promise<void> {
  await flushMicrotasks();
  sink.release();
  await recorder.flush();
}

function echo(name = 'hello', namespace = 'ns1', uid = `uid-${name}`): EventSubject {
  return { apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', metadata: { name, namespace, uid, resourceVersion: '42' } };
}

describe('event recorder: writing', () => {
  it('creates a core/v1 Event on the object, in its namespace, from echoperator', async () => {
    const { sink, recorder } = setup();
    recorder.recordEvent(echo(), 'Normal', 'JobCreated', 'created Job hello');
    assert.equal(await recorder.flush(), true);
    assert.equal(sink.creates.length, 1);
    const event = sink.creates[0]!;
    assert.match(event.metadata.name, /^hello\.[0-9a-f]+$/);
    assert.deepEqual({ ...event, metadata: { ...event.metadata, name: 'x' } }, {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'x', namespace: 'ns1' },
      involvedObject: {
        apiVersion: 'mmontes.io/v1alpha1',
        kind: 'Echo',
        name: 'hello',
        namespace: 'ns1',
        uid: 'uid-hello',
        resourceVersion: '42',
      },
      type: 'Normal',
      reason: 'JobCreated',
      message: 'created Job hello',
      source: { component: 'echoperator' },
      firstTimestamp: '2025-06-01T12:00:00Z',
      lastTimestamp: '2025-06-01T12:00:00Z',
      count: 1,
      reportingComponent: 'echoperator',
      reportingInstance: 'pod-1_abcd',
    } satisfies CoreEvent);
  });

  it('returns before anything is sent: recordEvent never waits on the API server', async () => {
    const { sink, recorder } = setup();
    sink.hold = true;
    recorder.recordEvent(echo(), 'Normal', 'JobCreated', 'm');
    assert.equal(sink.calls.length, 0, 'nothing sent synchronously');
    await releaseAndFlush(sink, recorder);
    assert.equal(sink.creates.length, 1);
  });

  it('writes cluster-scoped objects to the default namespace and drops objects without a name', async () => {
    const { sink, recorder, logger } = setup();
    recorder.recordEvent({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1', uid: 'n1' } }, 'Warning', 'Pressure', 'disk');
    recorder.recordEvent({ apiVersion: 'v1', kind: 'ConfigMap', metadata: {} }, 'Normal', 'X', 'y');
    await recorder.flush();
    assert.equal(sink.creates.length, 1);
    assert.equal(sink.creates[0]!.metadata.namespace, 'default');
    assert.equal(sink.creates[0]!.involvedObject.namespace, undefined);
    assert.ok(logger.lines.some((l) => l.level === 'warn' && /no kind or name/.test(l.msg)));
  });

  it('cuts long messages to 1024 characters', async () => {
    const { sink, recorder } = setup();
    recorder.recordEvent(echo(), 'Warning', 'Failed', 'x'.repeat(5000));
    await recorder.flush();
    assert.ok(sink.creates[0]!.message.length <= 1024);
    assert.ok(sink.creates[0]!.message.endsWith('...'));
  });
});

describe('event recorder: aggregation of identical events', () => {
  it('patches count and lastTimestamp of the Event it created for an identical event', async () => {
    const { clock, sink, recorder } = setup();
    for (let i = 0; i < 3; i++) {
      recorder.recordEvent(echo(), 'Warning', 'ReconcileError', 'quota exceeded');
      await recorder.flush();
      await clock.step(30_000);
    }
    assert.equal(sink.creates.length, 1);
    const name = sink.creates[0]!.metadata.name;
    assert.deepEqual(
      sink.calls.slice(1).map((c) => (c.op === 'patch' ? [c.namespace, c.name, c.patch.count, c.patch.lastTimestamp] : c.op)),
      [
        ['ns1', name, 2, '2025-06-01T12:00:30Z'],
        ['ns1', name, 3, '2025-06-01T12:01:00Z'],
      ],
    );
    assert.deepEqual(recorder.stats, { recorded: 3, created: 1, patched: 2, droppedSpam: 0, droppedQueueFull: 0, failed: 0 });
  });

  it('merges identical events still waiting into one write carrying their count', async () => {
    const { sink, recorder } = setup();
    for (let i = 0; i < 3; i++) recorder.recordEvent(echo(), 'Normal', 'JobCreated', 'created Job hello');
    await recorder.flush();
    assert.equal(sink.calls.length, 1);
    assert.equal(sink.creates[0]!.count, 3);
  });

  it('keeps events apart that differ in object, type, reason or message', async () => {
    const { sink, recorder } = setup();
    recorder.recordEvent(echo('a'), 'Normal', 'R', 'm');
    recorder.recordEvent(echo('b'), 'Normal', 'R', 'm');
    recorder.recordEvent(echo('a', 'ns2'), 'Normal', 'R', 'm');
    recorder.recordEvent(echo('a'), 'Warning', 'R', 'm');
    recorder.recordEvent(echo('a'), 'Normal', 'R2', 'm');
    recorder.recordEvent(echo('a'), 'Normal', 'R', 'm2');
    recorder.recordEvent(echo('a', 'ns1', 'other-uid'), 'Normal', 'R', 'm');
    await recorder.flush();
    assert.equal(sink.creates.length, 7);
    assert.equal(sink.patches.length, 0);
    assert.equal(new Set(sink.creates.map((e) => e.metadata.name)).size, 7, 'unique names');
  });

  it('creates a new Event when the identical one is older than 10 minutes', async () => {
    const { clock, sink, recorder } = setup();
    recorder.recordEvent(echo(), 'Normal', 'R', 'm');
    await recorder.flush();
    await clock.step(9 * 60_000);
    recorder.recordEvent(echo(), 'Normal', 'R', 'm');
    await recorder.flush();
    await clock.step(10 * 60_000 + 1);
    recorder.recordEvent(echo(), 'Normal', 'R', 'm');
    await recorder.flush();
    assert.deepEqual(
      sink.calls.map((c) => c.op),
      ['create', 'patch', 'create'],
    );
    assert.equal(sink.creates[1]!.count, 1);
  });

  it('creates the Event again when the one to patch is gone', async () => {
    const { sink, recorder } = setup();
    recorder.recordEvent(echo(), 'Normal', 'R', 'm');
    await recorder.flush();
    sink.failures.push(new ApiError(404, 'NotFound', 'events "hello.1" not found'));
    recorder.recordEvent(echo(), 'Normal', 'R', 'm');
    await recorder.flush();
    assert.deepEqual(
      sink.calls.map((c) => c.op),
      ['create', 'create'],
    );
    assert.notEqual(sink.creates[0]!.metadata.name, sink.creates[1]!.metadata.name);
    recorder.recordEvent(echo(), 'Normal', 'R', 'm');
    await recorder.flush();
    assert.equal(sink.calls.at(-1)?.op === 'patch' && sink.calls.at(-1)?.op, 'patch', 'patches the new one afterwards');
  });

  it('folds similar events (same reason, changing message) after 10 distinct messages', async () => {
    const { sink, recorder } = setup();
    for (let i = 1; i <= 12; i++) {
      recorder.recordEvent(echo(), 'Warning', 'BackOff', `attempt ${i} failed`);
      await recorder.flush();
    }
    const messages = sink.creates.map((e) => e.message);
    assert.equal(messages.length, 10);
    assert.deepEqual(
      messages.slice(0, 9),
      Array.from({ length: 9 }, (_, i) => `attempt ${i + 1} failed`),
    );
    assert.equal(messages[9], '(combined from similar events): attempt 10 failed');
    assert.deepEqual(
      sink.patches.map((p) => [p.count, p.message]),
      [
        [2, '(combined from similar events): attempt 11 failed'],
        [3, '(combined from similar events): attempt 12 failed'],
      ],
    );
  });
});

describe('event recorder: spam filter', () => {
  it('lets an object burst 25 events, then one per 5 minutes, other objects unaffected', async () => {
    const { clock, sink, recorder } = setup();
    for (let i = 0; i < 200; i++) recorder.recordEvent(echo(), 'Normal', `Reason${i}`, 'm');
    recorder.recordEvent(echo('other'), 'Normal', 'Reason', 'm');
    await recorder.flush();
    assert.equal(sink.creates.filter((e) => e.involvedObject.name === 'hello').length, 25);
    assert.equal(sink.creates.filter((e) => e.involvedObject.name === 'other').length, 1);
    assert.equal(recorder.stats.droppedSpam, 175);

    await clock.step(4 * 60_000);
    recorder.recordEvent(echo(), 'Normal', 'Later', 'm');
    await clock.step(60_000);
    recorder.recordEvent(echo(), 'Normal', 'Later', 'm');
    recorder.recordEvent(echo(), 'Normal', 'Later', 'm');
    await recorder.flush();
    assert.equal(sink.calls.length, 27, 'one token back after 5 minutes');
    assert.equal(recorder.stats.droppedSpam, 177);
  });

  it('counts identical events against the bucket too, so a hot loop is bounded', async () => {
    const { sink, recorder } = setup();
    for (let i = 0; i < 1000; i++) {
      recorder.recordEvent(echo(), 'Warning', 'ReconcileError', 'boom');
      if (i % 10 === 0) await recorder.flush();
    }
    await recorder.flush();
    assert.ok(sink.calls.length <= 25, `${sink.calls.length} writes`);
    const last = sink.patches.at(-1);
    assert.equal(last?.count, 25);
  });
});

describe('event recorder: failures and shutdown', () => {
  it('retries transient failures, pausing between tries, the first pause randomized', async () => {
    const { clock, sink, recorder } = setup({ retryIntervalMs: 10_000 });
    sink.failures.push(new ApiError(0, 'TransportError', 'ECONNREFUSED'), new ApiError(503, 'ServiceUnavailable', 'etcd'));
    recorder.recordEvent(echo(), 'Normal', 'R', 'm');
    await flushMicrotasks();
    assert.equal(sink.calls.length, 0);
    await clock.step(4_999);
    assert.equal(sink.calls.length, 0, 'first pause: random (0.5) x 10 s');
    await clock.step(1);
    assert.equal(sink.calls.length, 0, 'second try failed with 503');
    await clock.step(10_000);
    assert.equal(sink.creates.length, 1);
    assert.equal(recorder.stats.failed, 0);
    assert.equal(clock.timerCount, 0);
  });

  it('gives up after maxAttempts, and at once on a permanent error, logging why', async () => {
    const { clock, sink, recorder, logger } = setup({ maxAttempts: 3, retryIntervalMs: 1_000 });
    for (let i = 0; i < 5; i++) sink.failures.push(new ApiError(500, 'InternalError', 'boom'));
    recorder.recordEvent(echo('a'), 'Normal', 'R', 'm');
    await flushMicrotasks();
    await clock.step(5_000);
    assert.equal(recorder.stats.failed, 1);
    sink.failures.length = 0;
    sink.failures.push(new ApiError(403, 'Forbidden', 'events is forbidden'));
    recorder.recordEvent(echo('b'), 'Normal', 'R', 'm');
    await recorder.flush();
    assert.equal(recorder.stats.failed, 2);
    assert.equal(sink.calls.length, 0);
    const warns = logger.lines.filter((l) => l.msg === 'event not written');
    assert.deepEqual(
      warns.map((w) => [w.fields.name, w.fields.attempts, w.fields.code]),
      [
        ['a', 3, 500],
        ['b', 1, 403],
      ],
    );
  });

  it('renames and retries at once when the Event name is taken', async () => {
    const { sink, recorder } = setup();
    sink.failures.push(new ApiError(409, 'AlreadyExists', 'events "hello.x" already exists'));
    recorder.recordEvent(echo(), 'Normal', 'R', 'm');
    await recorder.flush();
    assert.equal(sink.creates.length, 1);
    assert.equal(recorder.stats.created, 1);
  });

  it('bounds the waiting events and drops the excess, with one log line', async () => {
    const { sink, recorder, logger } = setup({ queueSize: 5 });
    sink.hold = true;
    for (let i = 0; i < 10; i++) recorder.recordEvent(echo(`o${i}`), 'Normal', 'R', 'm');
    assert.equal(recorder.stats.droppedQueueFull, 5);
    assert.equal(logger.lines.filter((l) => /too many events waiting/.test(l.msg)).length, 1);
    await releaseAndFlush(sink, recorder);
    assert.equal(sink.creates.length, 5);
  });

  it('flush() reports a timeout; close() abandons what is left and leaves no timer behind', async () => {
    const { clock, sink, recorder } = setup();
    sink.hold = true;
    recorder.recordEvent(echo('a'), 'Normal', 'R', 'm');
    recorder.recordEvent(echo('b'), 'Normal', 'R', 'm');
    const flushed = recorder.flush(1_000);
    await clock.step(1_000);
    assert.equal(await flushed, false);

    const closed = recorder.close(2_000);
    recorder.recordEvent(echo('c'), 'Normal', 'R', 'm');
    await clock.step(2_000);
    await closed;
    assert.equal(sink.calls.length, 0);
    assert.equal(recorder.stats.failed, 2, 'the one in flight and the one waiting');
    assert.equal(recorder.stats.recorded, 2, 'nothing accepted after close');
    assert.equal(clock.timerCount, 0);
    await recorder.close(); // idempotent
  });

  it('close() waits for the writes in flight when they finish in time', async () => {
    const { sink, recorder } = setup();
    recorder.recordEvent(echo(), 'Normal', 'R', 'm');
    await recorder.close();
    assert.equal(sink.creates.length, 1);
  });

  it('holds Events back while the operator is busy, at most maxHoldMs, and writes them once it is not', async () => {
    let busy = true;
    const { clock, sink, recorder } = setup({ busy: () => busy, maxHoldMs: 10_000 });
    recorder.recordEvent(echo('a'), 'Normal', 'R', 'm');
    await flushMicrotasks();
    await clock.step(5_000);
    assert.equal(sink.calls.length, 0, 'held while busy');
    recorder.recordEvent(echo('a'), 'Normal', 'R', 'm');
    busy = false;
    await clock.step(100);
    assert.equal(sink.creates.length, 1, 'written within one look once not busy');
    assert.equal(sink.creates[0]!.count, 2, 'the identical event recorded while held merged into it');

    busy = true;
    recorder.recordEvent(echo('b'), 'Normal', 'R', 'm');
    await flushMicrotasks();
    await clock.step(9_999);
    assert.equal(sink.creates.length, 1);
    await clock.step(1);
    assert.equal(sink.creates.length, 2, 'written after maxHoldMs even though still busy');
    assert.equal(clock.timerCount, 0, 'no polling once nothing waits');
  });

  it('close() does not wait for a busy operator: held Events are flushed at once', async () => {
    const { clock, sink, recorder } = setup({ busy: () => true });
    recorder.recordEvent(echo(), 'Normal', 'R', 'm');
    await flushMicrotasks();
    const closed = recorder.close(5_000);
    await clock.step(100);
    await closed;
    assert.equal(sink.creates.length, 1);
    assert.equal(recorder.stats.failed, 0);
    assert.equal(clock.timerCount, 0);
  });

  it('never throws from recordEvent', () => {
    const { recorder } = setup();
    const hostile = {
      apiVersion: 'v1',
      kind: 'Pod',
      get metadata(): never {
        throw new Error('boom');
      },
    };
    assert.doesNotThrow(() => recorder.recordEvent(hostile, 'Normal', 'R', 'm'));
  });
});

/** Advances the clock a millisecond at a time, so chains of writes woken by timers keep up. */
async function advance(clock: FakeClock, ms: number): Promise<void> {
  for (let i = 0; i < ms; i++) await clock.step(1);
}

describe('event recorder: no Event lost to holding back or to shutdown', () => {
  it('a burst larger than the queue while busy loses nothing: holding stops at three quarters of the queue', async () => {
    const { clock, sink, recorder, logger } = setup({ busy: () => true, queueSize: 100 });
    // 5 ms per write: one writer at a time (200/s) would fall behind a recording rate of 1,000/s.
    sink.latency = { clock, ms: 5 };
    let writtenWhileBelowHalf = -1;
    for (let i = 0; i < 300; i++) {
      recorder.recordEvent(echo(`o${i}`), 'Normal', 'JobCreated', 'created');
      if (i === 40) writtenWhileBelowHalf = sink.calls.length;
      if (i % 10 === 9) await clock.step(10);
    }
    assert.equal(writtenWhileBelowHalf, 0, 'Events still yield while few wait');
    assert.equal(recorder.stats.droppedQueueFull, 0, 'never dropped at the cap');
    const flushed = recorder.flush(60_000);
    await clock.step(20_000);
    assert.equal(await flushed, true);
    assert.equal(sink.creates.length, 300);
    assert.deepEqual(new Set(sink.creates.map((e) => e.involvedObject.name)).size, 300);
    assert.equal(logger.lines.filter((l) => /too many events waiting/.test(l.msg)).length, 0);
    assert.ok(sink.maxInFlight <= 8, `at most 8 writes in flight, saw ${sink.maxInFlight}`);
    assert.equal(clock.timerCount, 0);
  });

  it('past the hold limit, one writer at first and more only as the queue nears its cap', async () => {
    const { clock, sink, recorder } = setup({ busy: () => true, queueSize: 100 });
    sink.hold = true;
    for (let i = 0; i < 76; i++) recorder.recordEvent(echo(`o${i}`), 'Normal', 'JobCreated', 'created');
    await flushMicrotasks();
    assert.equal(sink.maxInFlight, 1, 'one write in flight just past the limit (75 of 100), as client-go has');
    for (let i = 76; i < 100; i++) recorder.recordEvent(echo(`o${i}`), 'Normal', 'JobCreated', 'created');
    // The writer looks again once its write is answered.
    sink.release();
    sink.hold = true;
    await flushMicrotasks();
    // 99 of 100 waiting: up to 8; each write taken leaves fewer waiting, and so fewer writers wanted.
    assert.ok(sink.maxInFlight >= 5 && sink.maxInFlight <= 8, `several writes in flight near the cap, saw ${sink.maxInFlight}`);
    assert.equal(recorder.stats.droppedQueueFull, 0);
    // The rest, below the limit again, is held while busy: at most maxHoldMs.
    const flushed = recorder.flush(60_000);
    sink.release();
    await advance(clock, 11_000);
    assert.equal(await flushed, true);
    assert.equal(sink.creates.length, 100);
    assert.equal(clock.timerCount, 0);
  });

  it('close() flushes everything held, several writes at a time, and logs how many it wrote', async () => {
    const { clock, sink, recorder, logger } = setup({ busy: () => true });
    sink.latency = { clock, ms: 5 };
    for (let i = 0; i < 400; i++) recorder.recordEvent(echo(`o${i}`), 'Normal', 'JobCreated', 'created');
    await clock.step(1_000);
    assert.equal(sink.calls.length, 0, 'held while busy');
    // One at a time, 400 writes of 5 ms would need 2 s; the budget is 1 s.
    const closed = recorder.close(1_000);
    await advance(clock, 1_000);
    await closed;
    assert.equal(sink.creates.length, 400);
    assert.equal(recorder.stats.failed, 0);
    const line = logger.lines.find((l) => /^event recorder closed/.test(l.msg));
    assert.equal(line?.level, 'info');
    assert.deepEqual([line?.fields.flushed, line?.fields.created, line?.fields.abandoned], [400, 400, undefined]);
    assert.equal(clock.timerCount, 0);
  });

  it('a close whose budget runs out writes what it can and reports what it abandoned', async () => {
    const { clock, sink, recorder, logger } = setup({ busy: () => true });
    sink.latency = { clock, ms: 100 };
    for (let i = 0; i < 100; i++) recorder.recordEvent(echo(`o${i}`), 'Normal', 'JobCreated', 'created');
    await flushMicrotasks();
    const closed = recorder.close(450);
    await advance(clock, 450);
    await closed;
    const line = logger.lines.find((l) => /^event recorder closed/.test(l.msg));
    assert.equal(line?.level, 'warn');
    assert.equal(line?.msg, 'event recorder closed before all events were written');
    const flushed = Number(line?.fields.flushed);
    const abandoned = Number(line?.fields.abandoned);
    assert.equal(flushed, sink.creates.length);
    assert.ok(flushed > 4, `more than one write at a time: ${flushed}`);
    assert.equal(flushed + abandoned, 100, 'every event either written or counted as abandoned');
    assert.equal(recorder.stats.failed, abandoned);
    assert.equal(clock.timerCount, 0);
    await recorder.close(); // idempotent: no second line
    assert.equal(logger.lines.filter((l) => /^event recorder closed/.test(l.msg)).length, 1);
  });
});

describe('event recorder: REST sink and test doubles', () => {
  it('POSTs to the namespace events collection and merge-PATCHes by name', async () => {
    const requests: unknown[][] = [];
    const sink = restEventSink({
      request: async (method: string, path: string, opts?: { contentType?: string; body?: unknown }) => {
        requests.push([method, path, opts?.contentType, opts?.body]);
        return undefined as never;
      },
    });
    const signal = new AbortController().signal;
    const event = { metadata: { name: 'hello.1', namespace: 'ns1' } } as CoreEvent;
    await sink.create(event, signal);
    await sink.patch('ns1', 'hello.1', { count: 2, lastTimestamp: 't', message: 'm' }, signal);
    assert.deepEqual(requests, [
      ['POST', '/api/v1/namespaces/ns1/events', undefined, event],
      ['PATCH', '/api/v1/namespaces/ns1/events/hello.1', 'application/merge-patch+json', { count: 2, lastTimestamp: 't', message: 'm' }],
    ]);
  });

  it('offers a no-op recorder and a fake that keeps events for assertions', async () => {
    nopEventRecorder.recordEvent(echo(), 'Normal', 'R', 'm');
    const fake = new FakeEventRecorder();
    fake.recordEvent(echo(), 'Warning', 'Failed', 'no quota');
    assert.deepEqual(fake.lines(), ['Warning Failed no quota']);
  });
});

describe('event correlation parts', () => {
  it('SpamFilter refills fractionally and caps at the burst', () => {
    const f = new SpamFilter({ burst: 2, refillIntervalMs: 100 });
    assert.deepEqual([f.allow('k', 0), f.allow('k', 0), f.allow('k', 0)], [true, true, false]);
    assert.equal(f.allow('k', 50), false);
    assert.equal(f.allow('k', 100), true);
    assert.deepEqual([f.allow('k', 10_000), f.allow('k', 10_000), f.allow('k', 10_000)], [true, true, false]);
  });

  it('SimilarEventAggregator forgets a group after its window', () => {
    const a = new SimilarEventAggregator({ maxEvents: 2, windowMs: 100 });
    assert.equal(a.aggregate('g', 'm1', 0).combined, false);
    assert.equal(a.aggregate('g', 'm2', 10).combined, true);
    assert.equal(a.aggregate('g', 'm1', 20).combined, true);
    assert.equal(a.aggregate('g', 'm3', 200).combined, false);
  });

  it('LruMap forgets the least recently used key', () => {
    const m = new LruMap<string, number>(2);
    m.set('a', 1);
    m.set('b', 2);
    m.get('a');
    m.set('c', 3);
    assert.deepEqual([m.get('a'), m.get('b'), m.get('c'), m.size], [1, undefined, 3, 2]);
  });
});

describe('event recorder: metrics of events written and dropped', () => {
  /** A recorder whose metrics land in a map: `written Normal` / `dropped queue_full` -> occurrences. */
  function measured(options: Partial<EventRecorderOptions> = {}) {
    const counted = new Map<string, number>();
    const add = (key: string, n: number): void => void counted.set(key, (counted.get(key) ?? 0) + n);
    const metrics: EventRecorderMetrics = {
      written: (type, n) => add(`written ${type}`, n),
      dropped: (reason, n) => add(`dropped ${reason}`, n),
    };
    return { ...setup({ ...options, metrics }), counted: () => Object.fromEntries([...counted].sort()) };
  }

  it('counts occurrences written, by type: identical events merged into one write count each', async () => {
    const { sink, recorder, counted } = measured();
    for (let i = 0; i < 3; i++) recorder.recordEvent(echo(), 'Normal', 'JobCreated', 'created');
    recorder.recordEvent(echo(), 'Warning', 'Failed', 'no');
    await recorder.flush();
    assert.equal(sink.creates.length, 2);
    assert.deepEqual(counted(), { 'written Normal': 3, 'written Warning': 1 });
  });

  it('drops by the spam filter and by a full queue, each counted under its reason', async () => {
    const spam = measured();
    for (let i = 0; i < 30; i++) spam.recorder.recordEvent(echo(), 'Normal', 'R', 'same');
    await spam.recorder.flush();
    assert.deepEqual(spam.counted(), { 'dropped spam_filter': 5, 'written Normal': 25 });

    const full = measured({ queueSize: 5 });
    full.sink.hold = true;
    for (let i = 0; i < 10; i++) full.recorder.recordEvent(echo(`o${i}`), 'Warning', 'R', 'm');
    await releaseAndFlush(full.sink, full.recorder);
    assert.deepEqual(full.counted(), { 'dropped queue_full': 5, 'written Warning': 5 });
  });

  it('tells a refusal from retries running out', async () => {
    const { clock, sink, recorder, counted } = measured({ maxAttempts: 3, retryIntervalMs: 1_000 });
    for (let i = 0; i < 3; i++) sink.failures.push(new ApiError(0, 'TransportError', 'ECONNREFUSED'));
    recorder.recordEvent(echo('a'), 'Normal', 'R', 'm');
    recorder.recordEvent(echo('a'), 'Normal', 'R', 'm');
    await flushMicrotasks();
    await clock.step(5_000);
    sink.failures.push(new ApiError(403, 'Forbidden', 'events is forbidden'));
    recorder.recordEvent(echo('b'), 'Normal', 'R', 'm');
    await recorder.flush();
    assert.deepEqual(counted(), { 'dropped rejected': 1, 'dropped retries_exhausted': 2 });
  });

  it('counts what shutdown abandons, what comes after it, objects without a name and a recording that throws', async () => {
    const { clock, sink, recorder, counted } = measured();
    sink.hold = true;
    recorder.recordEvent(echo('a'), 'Normal', 'R', 'm');
    recorder.recordEvent(echo('b'), 'Normal', 'R', 'm');
    recorder.recordEvent(echo('b'), 'Normal', 'R', 'm');
    recorder.recordEvent({ kind: 'Echo', metadata: {} }, 'Normal', 'R', 'm');
    const hostile = {
      kind: 'Pod',
      get metadata(): never {
        throw new Error('boom');
      },
    };
    recorder.recordEvent(hostile, 'Normal', 'R', 'm');
    await flushMicrotasks();
    const closed = recorder.close(1_000);
    recorder.recordEvent(echo('c'), 'Normal', 'R', 'm');
    await clock.step(1_000);
    await closed;
    assert.deepEqual(counted(), { 'dropped internal_error': 1, 'dropped invalid_object': 1, 'dropped shutdown': 4 });
  });

  it('createMetrics exports every type and every reason from zero, and counts through the hook', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.events.dropped('queue_full', 2);
    metrics.events.written('Warning', 3);
    const text = await metrics.registry.metrics();
    for (const reason of EVENT_DROP_REASONS) {
      assert.equal(metricSample(text, 'echoperator_events_dropped_total', { reason }), reason === 'queue_full' ? 2 : 0, reason);
    }
    assert.equal(metricSample(text, 'echoperator_events_written_total', { type: 'Normal' }), 0);
    assert.equal(metricSample(text, 'echoperator_events_written_total', { type: 'Warning' }), 3);
    assert.match(text, /echoperator_events_dropped_total\{reason="spam_filter"\} 0/);
  });
});
