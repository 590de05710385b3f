import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock } from '../../src/runtime/testing/clock.js';
import { DelayingQueue, FairReadySet, LOW_PRIORITY, WorkQueue, newRateLimitingQueue } from '../../src/runtime/workqueue/index.js';

/** Takes every queued key, marking each done, in the order handed out. */
async function drain(queue: WorkQueue): Promise<string[]> {
  const keys: string[] = [];
  while (queue.len() > 0) {
    const { key } = (await queue.get())!;
    keys.push(key);
    queue.done(key);
  }
  return keys;
}

describe('WorkQueue order: priority', () => {
  it('hands out higher priorities first, oldest first within one', async () => {
    const queue = new WorkQueue();
    queue.add('ns/low-1', LOW_PRIORITY);
    queue.add('ns/fresh-1');
    queue.add('ns/low-2', LOW_PRIORITY);
    queue.add('ns/urgent', 10);
    queue.add('ns/fresh-2');
    assert.deepEqual(await drain(queue), ['ns/urgent', 'ns/fresh-1', 'ns/fresh-2', 'ns/low-1', 'ns/low-2']);
  });

  it('raises a waiting key to a higher priority at once, and never lowers it', async () => {
    const queue = new WorkQueue();
    queue.add('ns/a', LOW_PRIORITY);
    queue.add('ns/b', LOW_PRIORITY);
    queue.add('ns/c');
    queue.add('ns/b'); // fresh news about b: it moves up, behind c (queued at 0 before it)
    queue.add('ns/c', LOW_PRIORITY); // does not lower c
    assert.equal(queue.len(), 3, 'still one entry per key');
    const first = await queue.get();
    assert.deepEqual(first, { key: 'ns/c', priority: 0 });
    queue.done('ns/c');
    assert.deepEqual(await drain(queue), ['ns/b', 'ns/a']);
  });

  it('queues a key re-added while in flight with the highest priority it was added with', async () => {
    const queue = new WorkQueue();
    queue.add('ns/a', LOW_PRIORITY);
    const item = await queue.get();
    queue.add('ns/a', LOW_PRIORITY);
    queue.add('ns/a', 5);
    queue.add('ns/b');
    assert.equal(queue.len(), 1, 'a stays out of the queue while in flight');
    queue.done(item!.key);
    assert.deepEqual(await queue.get(), { key: 'ns/a', priority: 5 });
  });

  it('keeps the priority of a delayed add and of a rate-limited retry', async () => {
    const clock = new FakeClock();
    const queue = new DelayingQueue({ clock });
    queue.addAfter('ns/late', 100, 7);
    queue.addAfter('ns/late', 50, LOW_PRIORITY); // the earlier deadline wins, the higher priority stays
    queue.add('ns/now');
    await clock.step(50);
    assert.deepEqual(await queue.get(), { key: 'ns/late', priority: 7 });

    const limited = newRateLimitingQueue({ name: 'q', clock });
    limited.addRateLimited('ns/retry', LOW_PRIORITY);
    await clock.step(1000);
    assert.deepEqual(await limited.get(), { key: 'ns/retry', priority: LOW_PRIORITY });
    limited.shutDown();
  });
});

describe('WorkQueue order: fairness across namespaces', () => {
  it("serves a namespace's key after at most one key of each other namespace, whatever their backlog", async () => {
    const queue = new WorkQueue();
    for (let i = 0; i < 1000; i++) queue.add(`flood/e${i}`);
    queue.add('quiet/probe');
    const first = await drain(queue);
    assert.equal(first.indexOf('quiet/probe'), 1, 'one key of the flood went first, then the probe');
    assert.deepEqual(
      first.filter((k) => k.startsWith('flood/')),
      Array.from({ length: 1000 }, (_, i) => `flood/e${i}`),
      'oldest first within a namespace',
    );
  });

  it('takes turns round-robin among the namespaces that have keys', async () => {
    const queue = new WorkQueue();
    for (const k of ['a/1', 'a/2', 'a/3', 'b/1', 'c/1', 'c/2', 'b/2']) queue.add(k);
    assert.deepEqual(await drain(queue), ['a/1', 'b/1', 'c/1', 'a/2', 'b/2', 'c/2', 'a/3']);
  });

  it('is fair within each priority, and priority still comes first', async () => {
    const queue = new WorkQueue();
    for (let i = 0; i < 5; i++) queue.add(`a/low${i}`, LOW_PRIORITY);
    queue.add('b/low', LOW_PRIORITY);
    for (let i = 0; i < 3; i++) queue.add(`a/fresh${i}`);
    queue.add('b/fresh');
    assert.deepEqual((await drain(queue)).slice(0, 6), ['a/fresh0', 'b/fresh', 'a/fresh1', 'a/fresh2', 'a/low0', 'b/low']);
  });

  it('hands out first in, first out when asked for fifo, reporting the priority given', async () => {
    const queue = new WorkQueue({ order: { fifo: true } });
    queue.add('a/low', LOW_PRIORITY);
    queue.add('a/1');
    queue.add('b/1');
    queue.add('a/2');
    queue.add('a/low', 5); // raised, but keeps its place
    const first = await queue.get();
    assert.deepEqual(first, { key: 'a/low', priority: 5 });
    queue.done('a/low');
    assert.deepEqual(await drain(queue), ['a/1', 'b/1', 'a/2']);
  });

  it('partitions by a function of the key when given one', async () => {
    const queue = new WorkQueue({ order: { partition: (k) => k.slice(0, 1) } });
    for (const k of ['x1', 'x2', 'y1']) queue.add(k);
    assert.deepEqual(await drain(queue), ['x1', 'y1', 'x2']);
  });
});

describe('WorkQueue order: aging', () => {
  /**
   * One worker takes a key every tick while a fresh (default priority) key arrives every tick, in
   * the same namespace as a backlog of low-priority keys: without aging, no low key would ever be
   * handed out. Returns the tick at which `target` was handed out, or undefined.
   */
  async function run(agingMs: number, backlog: number, ticks: number): Promise<number | undefined> {
    const clock = new FakeClock();
    const tickMs = 100;
    const queue = new WorkQueue({ clock, order: { agingMs } });
    for (let i = 0; i < backlog; i++) queue.add(`a/old${i}`, LOW_PRIORITY);
    queue.add('a/target', LOW_PRIORITY);
    for (let tick = 0; tick < ticks; tick++) {
      queue.add(`a/fresh${tick}`);
      queue.add(`b/fresh${tick}`);
      const { key } = (await queue.get())!;
      queue.done(key);
      if (key === 'a/target') return tick;
      await clock.step(tickMs);
    }
    return undefined;
  }

  it('hands out a low-priority key within agingMs plus two hand-outs per aged key ahead of it, under a constant stream of fresh keys', async () => {
    const agingMs = 2_000;
    const backlog = 30;
    const handedOutAt = await run(agingMs, backlog, 1_000);
    assert.ok(handedOutAt !== undefined, 'the low-priority key was handed out');
    // The stated bound: aged after agingMs (20 ticks), then every other hand-out goes to the aged
    // keys, oldest first, and `backlog` of them are ahead of it.
    const bound = agingMs / 100 + 2 * (backlog + 1);
    assert.ok(handedOutAt <= bound, `handed out at tick ${handedOutAt}, bound ${bound}`);
  });

  it('starves the same key when aging is off (what the bound protects against)', async () => {
    assert.equal(await run(Infinity, 30, 500), undefined);
  });

  it('gives an aged key its turn among aged keys of other namespaces', () => {
    const set = new FairReadySet<string>({ agingMs: 1_000 });
    for (let i = 0; i < 3; i++) set.push(`a/old${i}`, LOW_PRIORITY, 0);
    set.push('b/old', LOW_PRIORITY, 0);
    set.push('a/fresh', 0, 1_500);
    const order = Array.from({ length: 5 }, () => set.shift(2_000)!.key);
    assert.deepEqual(order, ['a/old0', 'a/fresh', 'b/old', 'a/old1', 'a/old2']);
  });
});
