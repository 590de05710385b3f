import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, flushMicrotasks } from '../../src/runtime/testing/clock.js';
import {
  BucketRateLimiter,
  DelayingQueue,
  ItemExponentialFailureRateLimiter,
  LOW_PRIORITY,
  MaxOfRateLimiter,
  WorkQueue,
  defaultControllerRateLimiter,
  newRateLimitingQueue,
  type InFlightWork,
  type RateLimiter,
  type WorkQueueMetrics,
  type WorkQueueMetricsProvider,
} from '../../src/runtime/workqueue/index.js';

/** Observes a promise without awaiting it, so a test can assert that it is still pending. */
function track<T>(promise: Promise<T>): { settled: boolean; value: T | undefined } {
  const state: { settled: boolean; value: T | undefined } = { settled: false, value: undefined };
  void promise.then((value) => {
    state.settled = true;
    state.value = value;
  });
  return state;
}

async function getKey<K extends string>(queue: WorkQueue<K>): Promise<K | undefined> {
  return (await queue.get())?.key;
}

/** Takes every queued key, marking each done, in the order handed out. */
async function drainKeys(queue: WorkQueue): Promise<string[]> {
  const keys: string[] = [];
  while (queue.len() > 0) {
    const key = (await queue.get())!.key;
    keys.push(key);
    queue.done(key);
  }
  return keys;
}

describe('WorkQueue', () => {
  it('queues a key added three times once', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.add('a');
    queue.add('a');
    assert.equal(queue.len(), 1);
    assert.equal(await getKey(queue), 'a');
    assert.equal(queue.len(), 0);
    const next = track(queue.get());
    await flushMicrotasks();
    assert.equal(next.settled, false, 'no second copy of a');
  });

  it('resolves get() at once when a key is queued', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    const item = track(queue.get());
    await flushMicrotasks();
    assert.deepEqual(item.value, { key: 'a', priority: 0 });
  });

  it('hands out keys in FIFO order, a re-added key going to the back', async () => {
    const queue = new WorkQueue();
    for (const key of ['c', 'a', 'b']) queue.add(key);
    assert.equal(await getKey(queue), 'c');
    queue.done('c');
    queue.add('c');
    assert.deepEqual(await drainKeys(queue), ['a', 'b', 'c']);
  });

  it('keeps FIFO order across the internal compaction of a large queue', async () => {
    const queue = new WorkQueue();
    for (let i = 0; i < 3000; i++) queue.add(`k${i}`);
    const seen: string[] = [];
    for (let i = 0; i < 2000; i++) seen.push((await queue.get())!.key);
    for (let i = 3000; i < 12_000; i++) queue.add(`k${i}`);
    assert.equal(queue.len(), 10_000);
    while (queue.len() > 0) seen.push((await queue.get())!.key);
    assert.equal(seen.length, 12_000);
    seen.forEach((key, i) => assert.equal(key, `k${i}`));
  });

  it('never hands a key in flight to a second worker, and hands it once after done()', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    assert.equal(await getKey(queue), 'a');
    queue.add('a');
    queue.add('a');
    assert.equal(queue.len(), 0, 're-added key waits behind its own processing');
    const second = track(queue.get());
    await flushMicrotasks();
    assert.equal(second.settled, false);

    queue.done('a');
    await flushMicrotasks();
    assert.deepEqual(second.value, { key: 'a', priority: 0 });

    const third = track(queue.get());
    queue.done('a');
    await flushMicrotasks();
    assert.equal(third.settled, false, 'the three adds during processing made one more pass, not more');
  });

  it('lets other keys through while one is in flight', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    assert.equal(await getKey(queue), 'a');
    queue.add('a');
    queue.add('b');
    assert.equal(await getKey(queue), 'b');
  });

  it('ignores done() for a key that was not handed out', async () => {
    const queue = new WorkQueue();
    queue.add('a');
    queue.done('a');
    assert.equal(queue.len(), 1, 'still queued once, not twice');
    assert.equal(await getKey(queue), 'a');
    assert.equal(queue.len(), 0);
  });

  it('serves many waiting workers, oldest first, each a distinct key', async () => {
    const queue = new WorkQueue();
    const waiters = Array.from({ length: 100 }, () => track(queue.get()));
    await flushMicrotasks();
    assert.ok(waiters.every((w) => !w.settled));
    for (let i = 0; i < 60; i++) queue.add(`k${i}`);
    await flushMicrotasks();
    waiters.forEach((waiter, i) => {
      assert.deepEqual(waiter.value, i < 60 ? { key: `k${i}`, priority: 0 } : undefined);
      assert.equal(waiter.settled, i < 60);
    });
    assert.equal(queue.len(), 0);
  });

  it('wakes every waiting worker with undefined on shutDown()', async () => {
    const queue = new WorkQueue();
    const waiters = [track(queue.get()), track(queue.get()), track(queue.get())];
    queue.shutDown();
    await flushMicrotasks();
    for (const waiter of waiters) {
      assert.equal(waiter.settled, true);
      assert.equal(waiter.value, undefined);
    }
    assert.equal(queue.shuttingDown, true);
  });

  it('after shutDown() ignores adds and abandons queued keys', async () => {
    const queue = new WorkQueue();
    queue.add('queued');
    queue.shutDown();
    queue.add('late');
    assert.equal(await queue.get(), undefined);
    assert.equal(queue.len(), 1, 'only the key queued before shut down');
  });
});

describe('WorkQueue.shutDownWithDrain', () => {
  it('hands out queued keys and resolves true once every key is done', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    queue.add('a');
    queue.add('b');
    assert.equal(await getKey(queue), 'a');

    const drained = track(queue.shutDownWithDrain(10_000));
    queue.add('c');
    await flushMicrotasks();
    assert.equal(drained.settled, false);
    assert.equal(await getKey(queue), 'b', 'queued before the drain, so still handed out');

    queue.done('a');
    await flushMicrotasks();
    assert.equal(drained.settled, false, 'b is still in flight');
    assert.equal(await queue.get(), undefined, 'nothing queued: c was added after the drain began');

    queue.done('b');
    await flushMicrotasks();
    assert.equal(drained.value, true);
    assert.equal(clock.timerCount, 0, 'the timeout timer is cancelled');
  });

  it('processes again a key re-added during its processing before the drain', async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    queue.add('a');
    assert.equal(await getKey(queue), 'a');
    queue.add('a');
    const drained = track(queue.shutDownWithDrain(10_000));
    queue.done('a');
    await flushMicrotasks();
    assert.equal(drained.settled, false);
    assert.equal(await getKey(queue), 'a');
    queue.done('a');
    await flushMicrotasks();
    assert.equal(drained.value, true);
  });

  it('resolves false at its timeout and then stops like shutDown()', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    queue.add('a');
    queue.add('b');
    assert.equal(await getKey(queue), 'a');
    const drained = track(queue.shutDownWithDrain(1000));
    await clock.step(999);
    assert.equal(drained.settled, false);
    await clock.step(1);
    assert.equal(drained.settled, true);
    assert.equal(drained.value, false);
    assert.equal(await queue.get(), undefined, 'b is abandoned');
    queue.done('a');
  });

  it('resolves true at once when idle, leaving no timer', async () => {
    const clock = new FakeClock();
    const queue = new WorkQueue({ clock });
    const waiter = track(queue.get());
    assert.equal(await queue.shutDownWithDrain(1000), true);
    assert.equal(waiter.value, undefined);
    assert.equal(waiter.settled, true);
    assert.equal(clock.timerCount, 0);
  });

  it('ends early with false when shutDown() interrupts it', async () => {
    const queue = new WorkQueue({ clock: new FakeClock() });
    queue.add('a');
    await queue.get();
    const drained = track(queue.shutDownWithDrain(10_000));
    const again = track(queue.shutDownWithDrain(1));
    queue.shutDown();
    await flushMicrotasks();
    assert.equal(drained.value, false);
    assert.equal(drained.settled, true);
    assert.equal(again.settled, true, "a second call shares the first call's outcome");
  });
});

describe('DelayingQueue', () => {
  it('adds keys at their deadlines, earliest first', async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue({ clock });
    queue.addAfter('a', 30);
    queue.addAfter('b', 10);
    queue.addAfter('c', 20);
    queue.addAfter('d', 20);
    await clock.step(9);
    assert.equal(queue.len(), 0);
    await clock.step(1);
    assert.equal(queue.len(), 1);
    await clock.step(20);
    assert.deepEqual(await drainKeys(queue), ['b', 'c', 'd', 'a']);
    assert.equal(clock.timerCount, 0);
  });

  it('wakes a waiting worker when a deadline passes', async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue({ clock });
    const worker = track(queue.get());
    queue.addAfter('a', 50);
    await clock.step(49);
    assert.equal(worker.settled, false);
    await clock.step(1);
    assert.deepEqual(worker.value, { key: 'a', priority: 0 });
  });

  it('keeps the earlier deadline when a waiting key is added again', async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue({ clock });
    queue.addAfter('a', 100);
    queue.addAfter('a', 50);
    queue.addAfter('b', 50);
    queue.addAfter('b', 100);
    await clock.step(50);
    assert.deepEqual(await drainKeys(queue), ['a', 'b']);
    await clock.step(100);
    assert.equal(queue.len(), 0, 'neither key waits a second time');
    assert.equal(clock.timerCount, 0);
  });

  it('moves an earlier deadline ahead of others in the heap', async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue({ clock });
    for (let i = 0; i < 50; i++) queue.addAfter(`k${i}`, 100 + i);
    queue.addAfter('k40', 1);
    await clock.step(1);
    assert.deepEqual(await drainKeys(queue), ['k40']);
    await clock.step(200);
    const rest = await drainKeys(queue);
    assert.deepEqual(
      rest,
      Array.from({ length: 50 }, (_, i) => `k${i}`).filter((k) => k !== 'k40'),
    );
  });

  it('orders thousands of random deadlines like a stable sort, re-adds keeping the earliest', async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue({ clock });
    let seed = 42;
    const random = (n: number): number => {
      seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31;
      return seed % n;
    };
    const earliest = new Map<string, { readyAt: number; order: number }>();
    for (let i = 0; i < 3000; i++) {
      const key = `k${random(1000)}`;
      const readyAt = 1 + random(500);
      queue.addAfter(key, readyAt);
      const known = earliest.get(key);
      if (!known) earliest.set(key, { readyAt, order: i });
      else if (readyAt < known.readyAt) known.readyAt = readyAt;
    }
    const expected = [...earliest].sort(([, a], [, b]) => a.readyAt - b.readyAt || a.order - b.order).map(([key]) => key);
    await clock.step(500);
    assert.deepEqual(await drainKeys(queue), expected);
  });

  it('adds at once for a delay of zero or less', () => {
    const queue = new DelayingQueue({ clock: new FakeClock() });
    queue.addAfter('a', 0);
    queue.addAfter('b', -5);
    assert.equal(queue.len(), 2);
  });

  it('dedups a delayed key against the same key already queued', async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue({ clock });
    queue.add('a');
    queue.addAfter('a', 10);
    await clock.step(10);
    assert.equal(queue.len(), 1);
  });

  it('drops waiting keys and cancels its timer on shutDown()', async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue({ clock });
    queue.addAfter('a', 100);
    assert.equal(clock.timerCount, 1);
    queue.shutDown();
    assert.equal(clock.timerCount, 0);
    await clock.step(100);
    assert.equal(queue.len(), 0);
    queue.addAfter('b', 10);
    assert.equal(clock.timerCount, 0, 'no timer after shut down');
  });

  it('drops waiting keys when draining', async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue({ clock });
    queue.addAfter('a', 100);
    assert.equal(await queue.shutDownWithDrain(1000), true);
    assert.equal(clock.timerCount, 0);
  });
});

describe('ItemExponentialFailureRateLimiter', () => {
  it('doubles from the base per failure, per key, up to the cap', () => {
    const limiter = new ItemExponentialFailureRateLimiter(5, 1000);
    const delays = Array.from({ length: 10 }, () => limiter.when('a'));
    assert.deepEqual(delays, [5, 10, 20, 40, 80, 160, 320, 640, 1000, 1000]);
    assert.equal(limiter.retries('a'), 10);
    assert.equal(limiter.when('b'), 5, 'other keys are unaffected');
    assert.equal(limiter.retries('b'), 1);
  });

  it('defaults to 5 ms .. 1000 s and never overflows the cap', () => {
    const limiter = new ItemExponentialFailureRateLimiter();
    assert.equal(limiter.when('a'), 5);
    for (let i = 0; i < 2000; i++) limiter.when('a');
    assert.equal(limiter.when('a'), 1_000_000);
  });

  it('starts over after forget()', () => {
    const limiter = new ItemExponentialFailureRateLimiter(5, 1000);
    limiter.when('a');
    limiter.when('a');
    limiter.forget('a');
    assert.equal(limiter.retries('a'), 0);
    assert.equal(limiter.when('a'), 5);
  });
});

describe('BucketRateLimiter', () => {
  it('lets a burst through, then spaces reservations at 1/qps', () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter(10, 100, clock);
    for (let i = 0; i < 100; i++) assert.equal(limiter.when(`k${i}`), 0);
    assert.equal(limiter.when('x'), 100);
    assert.equal(limiter.when('y'), 200);
    assert.equal(limiter.retries('x'), 0);
  });

  it('refills at qps, never beyond the burst', async () => {
    const clock = new FakeClock();
    const limiter = new BucketRateLimiter(10, 3, clock);
    for (let i = 0; i < 5; i++) limiter.when('k'); // 3 tokens, then 2 reserved ahead
    await clock.step(200);
    assert.equal(limiter.when('k'), 100, 'the two reserved tokens were repaid; the next is 100 ms away');
    await clock.step(60_000);
    assert.deepEqual([limiter.when('k'), limiter.when('k'), limiter.when('k'), limiter.when('k')], [0, 0, 0, 100]);
  });

  it('rejects a bucket that could never hand out a token', () => {
    assert.throws(() => new BucketRateLimiter(0, 1, new FakeClock()), RangeError);
    assert.throws(() => new BucketRateLimiter(1, 0, new FakeClock()), RangeError);
  });
});

describe('MaxOfRateLimiter', () => {
  it('waits as long as the slowest limiter, consulting every limiter each time', () => {
    const clock = new FakeClock();
    const exponential = new ItemExponentialFailureRateLimiter(5, 1000);
    const bucket = new BucketRateLimiter(1, 1, clock);
    const limiter = new MaxOfRateLimiter(exponential, bucket);
    assert.equal(limiter.when('a'), 5, 'bucket has a token; exponential says 5');
    assert.equal(limiter.when('a'), 1000, 'bucket is empty: 1 s at 1 qps beats 10 ms');
    assert.equal(exponential.retries('a'), 2);
    assert.equal(limiter.retries('a'), 2);
    limiter.forget('a');
    assert.equal(exponential.retries('a'), 0);
  });

  it('is what defaultControllerRateLimiter builds: per-key backoff, overall 10 qps after a burst of 100', () => {
    const clock = new FakeClock();
    const sameKey = defaultControllerRateLimiter(clock);
    assert.deepEqual([sameKey.when('a'), sameKey.when('a'), sameKey.when('a')], [5, 10, 20]);

    const manyKeys = defaultControllerRateLimiter(clock);
    for (let i = 0; i < 100; i++) assert.equal(manyKeys.when(`k${i}`), 5);
    assert.equal(manyKeys.when('k100'), 100);
  });
});

describe('RateLimitingQueue', () => {
  it('requeues through the limiter, counting requeues until forget()', async () => {
    const clock = new FakeClock();
    const queue = newRateLimitingQueue({ name: 'test', clock });
    queue.addRateLimited('a');
    assert.equal(queue.numRequeues('a'), 1);
    await clock.step(4);
    assert.equal(queue.len(), 0);
    await clock.step(1);
    assert.equal(await getKey(queue), 'a');
    queue.done('a');

    queue.addRateLimited('a');
    await clock.step(9);
    assert.equal(queue.len(), 0);
    await clock.step(1);
    assert.equal(queue.len(), 1, 'second failure waits 10 ms');
    assert.equal(queue.numRequeues('a'), 2);

    queue.forget('a');
    assert.equal(queue.numRequeues('a'), 0);
    assert.equal(queue.len(), 1, 'forget does not remove the key from the queue');
  });

  it('uses an injected limiter and stops consulting it once shut down', () => {
    const asked: string[] = [];
    const limiter: RateLimiter = {
      when: (key) => (asked.push(key), 0),
      forget() {},
      retries: () => 0,
    };
    const queue = newRateLimitingQueue({ name: 'test', clock: new FakeClock(), rateLimiter: limiter });
    queue.addRateLimited('a');
    assert.equal(queue.len(), 1);
    queue.shutDown();
    queue.addRateLimited('b');
    assert.deepEqual(asked, ['a']);
  });
});

interface Recorded {
  name: string;
  inFlight: () => InFlightWork;
  depth: number[];
  adds: number;
  queueSeconds: number[];
  workSeconds: number[];
  retries: number;
  delayed: number[];
}

function recordingProvider(): { provider: WorkQueueMetricsProvider; queues: Recorded[] } {
  const queues: Recorded[] = [];
  const provider: WorkQueueMetricsProvider = {
    forQueue(name, inFlight): WorkQueueMetrics {
      const r: Recorded = { name, inFlight, depth: [], adds: 0, queueSeconds: [], workSeconds: [], retries: 0, delayed: [] };
      queues.push(r);
      return {
        setDepth: (n) => void r.depth.push(n),
        incAdds: () => void r.adds++,
        observeQueueDuration: (s) => void r.queueSeconds.push(s),
        observeWorkDuration: (s) => void r.workSeconds.push(s),
        incRetries: () => void r.retries++,
        setDelayedDepth: (n) => void r.delayed.push(n),
      };
    },
  };
  return { provider, queues };
}

describe('work queue metrics', () => {
  it('reports adds, depth, queue and work durations, labelled by name', async () => {
    const clock = new FakeClock();
    const { provider, queues } = recordingProvider();
    const queue = newRateLimitingQueue({ name: 'echo', clock, metrics: provider });
    assert.equal(queues.length, 1);
    const m = queues[0]!;
    assert.equal(m.name, 'echo');

    queue.add('a');
    queue.add('a');
    queue.add('b');
    assert.equal(m.adds, 2, 'a dedup-ed add is not an add');
    assert.deepEqual(m.depth, [1, 2]);

    await clock.step(250);
    assert.equal(await getKey(queue), 'a');
    assert.deepEqual(m.queueSeconds, [0.25]);
    assert.deepEqual(m.depth, [1, 2, 1]);

    queue.add('a');
    assert.equal(m.adds, 3);
    assert.deepEqual(m.depth, [1, 2, 1, 2], 'a key held back behind its own processing counts in depth');

    await clock.step(1000);
    queue.done('a');
    assert.deepEqual(m.workSeconds, [1]);
    assert.equal(await getKey(queue), 'b');
    assert.equal(await getKey(queue), 'a');
    assert.deepEqual(m.queueSeconds, [0.25, 1.25, 1]);
    assert.deepEqual(m.depth.at(-1), 0);
  });

  it('counts retries on addRateLimited only', () => {
    const clock = new FakeClock();
    const { provider, queues } = recordingProvider();
    const queue = newRateLimitingQueue({ name: 'echo', clock, metrics: provider });
    queue.addRateLimited('a');
    queue.addRateLimited('b');
    queue.addAfter('c', 10);
    queue.add('d');
    assert.equal(queues[0]!.retries, 2);
  });

  it('reports the keys waiting out a delay, apart from the depth, until each is added or dropped', async () => {
    const clock = new FakeClock();
    const { provider, queues } = recordingProvider();
    const queue = newRateLimitingQueue({ name: 'echo', clock, metrics: provider });
    const m = queues[0]!;
    queue.addAfter('a', 100);
    queue.addRateLimited('b');
    queue.addAfter('a', 50); // already waiting: an earlier deadline, not another key
    assert.deepEqual(m.delayed, [1, 2]);
    assert.deepEqual(m.depth, [], 'a delayed key is not in the depth');
    await clock.step(60);
    assert.deepEqual(m.delayed, [1, 2, 1, 0], 'b (5 ms backoff) and then a (50 ms) were added at their deadlines');
    assert.equal(queue.len(), 2);
    queue.addAfter('c', 1000);
    queue.shutDown();
    assert.deepEqual(m.delayed.slice(-2), [1, 0], 'shutting down drops the waiting keys');
  });

  it('computes unfinished work and the longest running processor when polled', async () => {
    const clock = new FakeClock();
    const { provider, queues } = recordingProvider();
    const queue = new WorkQueue({ name: 'echo', clock, metrics: provider });
    const inFlight = queues[0]!.inFlight;
    assert.deepEqual(inFlight(), { unfinishedWorkSeconds: 0, longestRunningProcessorSeconds: 0, longestWaitingSeconds: new Map() });

    queue.add('a');
    queue.add('b');
    await queue.get();
    await clock.step(2000);
    await queue.get();
    queue.add('c', LOW_PRIORITY);
    await clock.step(1000);
    const waiting = new Map([
      [0, 0],
      [LOW_PRIORITY, 1],
    ]);
    assert.deepEqual(inFlight(), { unfinishedWorkSeconds: 4, longestRunningProcessorSeconds: 3, longestWaitingSeconds: waiting });

    queue.done('a');
    assert.deepEqual(inFlight(), { unfinishedWorkSeconds: 1, longestRunningProcessorSeconds: 1, longestWaitingSeconds: waiting });
    assert.deepEqual(queue.unfinishedWork(), inFlight());
  });

  it('reports nothing for a queue without a name', () => {
    const { provider, queues } = recordingProvider();
    const queue = new WorkQueue({ clock: new FakeClock(), metrics: provider });
    queue.add('a');
    assert.equal(queues.length, 0);
  });
});
