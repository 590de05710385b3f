import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Controller, generationChangedOrDeleted, type ReconcileContext } from '../../src/runtime/controller/index.js';
import type { EventHandler } from '../../src/runtime/controller/sources.js';
import { ItemExponentialFailureRateLimiter, LOW_PRIORITY } from '../../src/runtime/workqueue/index.js';
import type { KubeObject } from '../../src/kube/object.js';
import { FakeClock } from '../../src/runtime/testing/clock.js';
import { eventually, signal, within } from '../support/eventually.js';

class Source<T> {
  handlers: EventHandler<T>[] = [];
  addEventHandler(h: EventHandler<T>): void {
    this.handlers.push(h);
  }
}

const obj = (name: string, generation: number, extra: object = {}) => ({ metadata: { name, namespace: 'ns', generation, ...extra } });

describe('Controller', () => {
  it('with generationChangedOrDeleted, enqueues adds, deletes and generation changes of the primary, not status-only updates', () => {
    const src = new Source<KubeObject>();
    const c = new Controller({ name: 't', workers: 1 }, { reconcile: async () => undefined }).watchPrimary(src, generationChangedOrDeleted);
    const h = src.handlers[0]!;
    h.onUpdate!(obj('a', 1), obj('a', 1, { resourceVersion: '2' }));
    assert.equal(c.queue.len(), 0, 'status-only change');
    h.onUpdate!(obj('a', 1), obj('a', 2));
    h.onAdd!(obj('a', 2));
    assert.equal(c.queue.len(), 1, 'one key, de-duplicated');
    h.onDelete!(obj('b', 1));
    assert.equal(c.queue.len(), 2);
    const same = obj('c', 1);
    h.onUpdate!(same, same);
    assert.equal(c.queue.len(), 3, 'a resync passes');
  });

  it('queues the initial list and resyncs of unchanged objects behind fresh news, and keeps a priority on retry', async () => {
    type Obj = { metadata: { name: string; namespace: string; generation: number; resourceVersion: string } };
    const src = new Source<Obj>();
    const o = (name: string, resourceVersion: string, generation = 1): Obj => ({
      metadata: { name, namespace: 'ns', generation, resourceVersion },
    });
    const c = new Controller({ name: 't', workers: 1 }, { reconcile: async () => undefined }).watchPrimary(src);
    const h = src.handlers[0]!;
    h.onAdd!(o('listed', '1'), true);
    const resynced = o('resynced', '2');
    h.onUpdate!(resynced, resynced);
    h.onAdd!(o('created', '3'), false);
    h.onUpdate!(o('changed', '4'), o('changed', '5', 2));
    const order: { key: string; priority: number }[] = [];
    for (let i = 0; i < 4; i++) {
      const item = (await c.queue.get())!;
      order.push(item);
      c.queue.done(item.key);
    }
    assert.deepEqual(order, [
      { key: 'ns/created', priority: 0 },
      { key: 'ns/changed', priority: 0 },
      { key: 'ns/listed', priority: LOW_PRIORITY },
      { key: 'ns/resynced', priority: LOW_PRIORITY },
    ]);
    c.queue.shutDown();
  });

  it("queues an owned object's change at its owner's backlog priority, and a fresh owner's at the default", async () => {
    type Obj = {
      metadata: {
        name: string;
        namespace: string;
        generation?: number;
        resourceVersion?: string;
        ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller: boolean }[];
      };
    };
    const primaries = new Source<Obj>();
    const jobs = new Source<Obj>();
    const jobOf = (owner: string): Obj => ({
      metadata: {
        name: `${owner}-job`,
        namespace: 'ns',
        resourceVersion: '9',
        ownerReferences: [{ apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', name: owner, uid: owner, controller: true }],
      },
    });
    const order: string[] = [];
    const firstPass = new Set<string>();
    /** What else happens during a key's first pass (objects queued meanwhile). */
    const during = new Map<string, () => void>();
    const c = new Controller(
      { name: 't', workers: 1 },
      {
        reconcile: async (key: string) => {
          order.push(key);
          const name = key.slice('ns/'.length);
          // The first pass creates the owner's Job: its ADDED (fresh news, not the initial list) arrives meanwhile.
          if (!firstPass.has(name)) {
            firstPass.add(name);
            during.get(name)?.();
            jobs.handlers[0]!.onAdd!(jobOf(name), false);
          }
          return undefined;
        },
      },
    )
      .watchPrimary(primaries)
      .watchOwned(jobs, { group: 'mmontes.io', kind: 'Echo' });
    const p = primaries.handlers[0]!;
    p.onAdd!({ metadata: { name: 'old1', namespace: 'ns', generation: 1 } }, true);
    p.onAdd!({ metadata: { name: 'old2', namespace: 'ns', generation: 1 } }, true);
    const stop = new AbortController();
    const run = c.run({ stop: stop.signal, drainTimeoutMs: 1000 });
    await eventually('four reconciles', () => order.length >= 4, 5_000, 1);
    // old1's own Job went behind the rest of the backlog (old2), as in FIFO order.
    assert.deepEqual(order, ['ns/old1', 'ns/old2', 'ns/old1', 'ns/old2']);

    // A fresh Echo's Job is news: its owner goes ahead of a backlog queued meanwhile.
    order.length = 0;
    during.set('fresh', () => p.onAdd!({ metadata: { name: 'old3', namespace: 'ns', generation: 1 } }, true));
    p.onAdd!({ metadata: { name: 'fresh', namespace: 'ns', generation: 1 } }, false);
    await eventually('four reconciles', () => order.length >= 4, 5_000, 1);
    assert.deepEqual(order, ['ns/fresh', 'ns/fresh', 'ns/old3', 'ns/old3']);

    // A change of a backlog owner itself is fresh: from then on its Job's changes are too.
    order.length = 0;
    firstPass.delete('old1');
    during.set('old1', () => p.onAdd!({ metadata: { name: 'old4', namespace: 'ns', generation: 1 } }, true));
    p.onUpdate!(
      { metadata: { name: 'old1', namespace: 'ns', generation: 1 } },
      { metadata: { name: 'old1', namespace: 'ns', generation: 2 } },
    );
    await eventually('four reconciles', () => order.length >= 4, 5_000, 1);
    assert.deepEqual(order, ['ns/old1', 'ns/old1', 'ns/old4', 'ns/old4']);
    stop.abort();
    await run;
  });

  it('maps owned objects to their controller owner of the right kind', () => {
    const src = new Source<KubeObject>();
    const c = new Controller({ name: 't', workers: 1 }, { reconcile: async () => undefined }).watchOwned(src, {
      group: 'mmontes.io',
      kind: 'Echo',
    });
    const owned = (kind: string, controller: boolean) => ({
      metadata: {
        name: 'job',
        namespace: 'ns',
        ownerReferences: [{ apiVersion: 'mmontes.io/v1alpha1', kind, name: 'owner', uid: 'u', controller }],
      },
    });
    src.handlers[0]!.onAdd!(owned('Echo', false));
    src.handlers[0]!.onAdd!(owned('ScheduledEcho', true));
    assert.equal(c.queue.len(), 0);
    src.handlers[0]!.onAdd!(owned('Echo', true));
    assert.equal(c.queue.len(), 1);
  });

  it('never runs one key on two workers, retries failures, and drains in-flight work on stop', async () => {
    let running = 0;
    let overlap = false;
    let calls = 0;
    const firstStarted = signal();
    const releaseFirst = signal();
    const succeeded = signal();
    const c = new Controller(
      // Retries without delay: a delayed retry landing during a later pass would add a pass of its
      // own, so the count of passes would depend on timing.
      { name: 't', workers: 4, rateLimiter: new ItemExponentialFailureRateLimiter(0, 0) },
      {
        reconcile: async () => {
          running++;
          if (running > 1) overlap = true;
          calls++;
          if (calls === 1) {
            firstStarted.resolve();
            await releaseFirst.promise;
          }
          await new Promise((r) => setImmediate(r));
          running--;
          if (calls < 3) throw new Error('transient');
          succeeded.resolve();
          return undefined;
        },
      },
    );
    const stop = new AbortController();
    const done = c.run({ stop: stop.signal, drainTimeoutMs: 1000 });
    c.enqueue('ns/a');
    await within('the first reconcile', firstStarted.promise, 5_000);
    // Re-added while in flight, with three workers idle: a queue that let two workers take one
    // key would hand it out now, and the second reconcile would start within this turn.
    c.enqueue('ns/a');
    c.enqueue('ns/a');
    await new Promise((r) => setImmediate(r));
    releaseFirst.resolve();
    await within('a reconcile that succeeds after two failures', succeeded.promise, 5_000);
    assert.equal(overlap, false);
    assert.equal(calls, 3, 'failures are retried, and the re-adds during the first pass made one more pass');
    stop.abort();
    await within('the controller to stop', done, 5_000);
  });

  it('aborts in-flight reconciles at once when stopped immediately (leadership lost)', async () => {
    let seen: AbortSignal | undefined;
    const started = signal();
    const aborted = signal();
    const c = new Controller(
      { name: 't', workers: 1 },
      {
        reconcile: (_key: string, ctx: ReconcileContext) => {
          seen = ctx.signal;
          started.resolve();
          return new Promise((_, reject) =>
            ctx.signal.addEventListener('abort', () => {
              aborted.resolve();
              reject(ctx.signal.reason);
            }),
          );
        },
      },
    );
    const stop = new AbortController();
    const abort = new AbortController();
    const done = c.run({ stop: stop.signal, abort: abort.signal, drainTimeoutMs: 60_000 });
    c.enqueue('ns/a');
    await within('the reconcile to start', started.promise, 5_000);
    abort.abort(new Error('lost'));
    await within('the in-flight reconcile to be aborted, before any stop', aborted.promise, 5_000);
    assert.ok(seen?.aborted, 'the in-flight reconcile is aborted before any stop');
    assert.equal((seen?.reason as Error).message, 'lost');
    stop.abort();
    await done;
  });

  it('gives in-flight reconciles the drain bound after stop, then aborts them', async () => {
    // Drain time is the controller's clock: a fake one decides the bound to the millisecond.
    const clock = new FakeClock();
    let seen: AbortSignal | undefined;
    const started = signal();
    let finish!: () => void;
    const c = new Controller(
      { name: 't', workers: 1, clock },
      {
        reconcile: (_key: string, ctx: ReconcileContext) => {
          seen = ctx.signal;
          started.resolve();
          return new Promise((resolve, reject) => {
            ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason));
            finish = () => resolve(undefined);
          });
        },
      },
    );
    const stop = new AbortController();
    c.enqueue('ns/a');
    const run = c.run({ stop: stop.signal, drainTimeoutMs: 200 });
    await within('the reconcile to start', started.promise, 5_000);
    stop.abort();
    await eventually('the drain timer', () => clock.nextTimerAt() === 200, 5_000, 1);
    await clock.step(199);
    finish();
    await within('the controller to stop once its reconcile finished', run, 5_000);
    assert.equal(seen?.aborted, false, 'a reconcile that finishes within the drain bound is not aborted');

    let slowSeen: AbortSignal | undefined;
    const slowStarted = signal();
    const slow = new Controller(
      { name: 'slow', workers: 1, clock },
      {
        reconcile: (_k, ctx) => {
          slowSeen = ctx.signal;
          slowStarted.resolve();
          return new Promise((_, reject) => ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason)));
        },
      },
    );
    const stopSlow = new AbortController();
    slow.enqueue('ns/b');
    const runSlow = slow.run({ stop: stopSlow.signal, drainTimeoutMs: 50 });
    await within('the slow reconcile to start', slowStarted.promise, 5_000);
    stopSlow.abort();
    const stoppedAt = clock.now();
    await eventually('the drain timer', () => clock.nextTimerAt() === stoppedAt + 50, 5_000, 1);
    await clock.step(49);
    assert.equal(slowSeen?.aborted, false, 'not aborted before the drain bound');
    await clock.step(1);
    await within('the controller to stop at the drain bound', runSlow, 5_000);
    assert.equal((slowSeen?.reason as Error).message, 'shutdown deadline passed', 'aborted when the drain bound passed');
  });
});
