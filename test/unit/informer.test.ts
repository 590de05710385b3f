import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiError, isGone, type RestClient } from '../../src/kube/index.js';
import { Backoff } from '../../src/runtime/backoff.js';
import { CONTROLLER_OWNER_INDEX, controllerOwnerKey, type KubeObject } from '../../src/runtime/cache/index.js';
import { FakeClock, flushMicrotasks } from '../../src/runtime/testing/clock.js';
import { nopLogger, type Logger } from '../../src/runtime/log.js';
import {
  Informer,
  LAST_APPLIED_ANNOTATION,
  kubeListerWatcher,
  type InformerMetrics,
  type InformerOptions,
  type ListOptions,
  type ListResult,
  type ListerWatcher,
  type WatchEvent,
  type WatchOptions,
} from '../../src/runtime/informer/index.js';

interface Obj extends KubeObject {
  data?: Record<string, string>;
}

function obj(name: string, rv: string, extra: Partial<NonNullable<Obj['metadata']>> = {}): Obj {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', uid: `uid-${name}`, resourceVersion: rv, ...extra } };
}

const gone = (): ApiError => new ApiError(410, 'Expired', 'too old resource version');

/** One watch opened by the informer, driven by the test. */
class FakeWatch {
  settled = false;
  constructor(
    readonly options: WatchOptions,
    private readonly onEvent: (event: WatchEvent<Obj>) => void,
    readonly signal: AbortSignal,
    private readonly resolve: () => void,
    private readonly reject: (err: unknown) => void,
  ) {
    signal.addEventListener('abort', () => this.end(), { once: true });
  }

  /** Open: not ended by us, by the server, or by an abort. */
  get open(): boolean {
    return !this.settled && !this.signal.aborted;
  }

  emit(type: Exclude<WatchEvent<Obj>['type'], 'UNPARSEABLE'>, object: Obj | Record<string, unknown> | null): void {
    this.onEvent({ type, object: structuredClone(object) } as WatchEvent<Obj>);
  }

  /** Hands the informer exactly this, as a broken stream or server might. */
  raw(event: unknown): void {
    this.onEvent(event as WatchEvent<Obj>);
  }

  end(): void {
    this.settled = true;
    this.resolve();
  }

  fail(err: unknown): void {
    this.settled = true;
    this.reject(err);
  }
}

/** Serves `objects` at `rv` in pages of opts.limit; lists fail while `listErrors` has entries. */
class FakeListerWatcher implements ListerWatcher<Obj> {
  objects: (Obj | Record<string, unknown> | null)[] = [];
  rv = '10';
  readonly listCalls: ListOptions[] = [];
  readonly listErrors: Error[] = [];
  /** Called per list request before serving; may throw. */
  beforeList: (opts: ListOptions) => void = () => {};
  readonly watches: FakeWatch[] = [];

  async list(opts: ListOptions): Promise<ListResult<Obj>> {
    this.listCalls.push({ ...opts });
    this.beforeList(opts);
    const err = this.listErrors.shift();
    if (err) throw err;
    const start = opts.continue ? Number(opts.continue.split(':')[1]) : 0;
    const end = opts.limit ? start + opts.limit : this.objects.length;
    return {
      // Clones, as a real client parses fresh objects: the transform may then change them.
      items: structuredClone(this.objects.slice(start, end)) as Obj[],
      resourceVersion: this.rv,
      continue: end < this.objects.length ? `token:${end}` : undefined,
    };
  }

  watch(options: WatchOptions, onEvent: (event: WatchEvent<Obj>) => void, signal: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      this.watches.push(new FakeWatch({ ...options }, onEvent, signal, resolve, reject));
    });
  }

  get watch0(): FakeWatch {
    return this.watches.at(-1)!;
  }

  get openWatches(): number {
    return this.watches.filter((w) => w.open).length;
  }
}

class CountingMetrics implements InformerMetrics {
  listRequests = 0;
  listErrors = 0;
  relists = 0;
  watches = 0;
  readonly watchErrors: string[] = [];
  readonly malformed: string[] = [];
  malformedEvent(reason: string): void {
    this.malformed.push(reason);
  }
  listRequest(): void {
    this.listRequests++;
  }
  listError(): void {
    this.listErrors++;
  }
  relist(): void {
    this.relists++;
  }
  watchStarted(): void {
    this.watches++;
  }
  watchError(reason: string): void {
    this.watchErrors.push(reason);
  }
}

const describeObj = (o: Obj): string => `${o.metadata!.name}@${o.metadata!.resourceVersion}`;

/** An informer over a fake ListerWatcher and a FakeClock, with every handler call recorded. */
function harness(options: Partial<InformerOptions<Obj>> = {}) {
  const clock = new FakeClock();
  const lw = new FakeListerWatcher();
  const metrics = new CountingMetrics();
  const informer = new Informer<Obj>({ listerWatcher: lw, clock, metrics, random: () => 0, name: 'test', ...options });
  const events: string[] = [];
  informer.addEventHandler({
    onAdd: (o) => events.push(`add ${describeObj(o)}`),
    onUpdate: (a, b) => events.push(`update ${describeObj(a)} -> ${describeObj(b)}`),
    onDelete: (o) => events.push(`delete ${describeObj(o)}`),
  });
  const cancel = new AbortController();
  let outcome: Promise<unknown> | undefined;
  const h = {
    clock,
    lw,
    metrics,
    informer,
    events,
    cancel,
    /** Starts run(); outcome is 'stopped' or the rejection. */
    async start(): Promise<void> {
      outcome = informer.run(cancel.signal).then(
        () => 'stopped',
        (err: unknown) => err,
      );
      await settle();
    },
    async stop(): Promise<unknown> {
      cancel.abort();
      return await h.outcome();
    },
    outcome: (): Promise<unknown> => outcome!,
    /** Takes (and clears) the handler calls seen so far. */
    take(): string[] {
      return events.splice(0);
    },
  };
  return h;
}

/** A harness whose informer runs: it listed what the fake serves and watches. */
async function started(options: Partial<InformerOptions<Obj>> = {}): Promise<ReturnType<typeof harness>> {
  const h = harness(options);
  await h.start();
  return h;
}

/** A started harness over `objects`, their initial adds already taken: the test sees what follows. */
async function startedOver(objects: Obj[], options: Partial<InformerOptions<Obj>> = {}): Promise<ReturnType<typeof harness>> {
  const h = harness(options);
  h.lw.objects = objects;
  await h.start();
  h.take();
  return h;
}

async function settle(): Promise<void> {
  await flushMicrotasks(50);
}

describe('Informer', () => {
  it('lists in pages following continue tokens, then watches from the list resourceVersion', async () => {
    const h = harness({ pageSize: 2 });
    h.lw.objects = [obj('a', '1'), obj('b', '2'), obj('c', '3'), obj('d', '4'), obj('e', '5')];
    h.lw.rv = '42';
    await h.start();

    assert.deepEqual(h.lw.listCalls, [
      { limit: 2, continue: undefined },
      { limit: 2, continue: 'token:2' },
      { limit: 2, continue: 'token:4' },
    ]);
    assert.equal(h.metrics.listRequests, 3);
    assert.deepEqual(h.take(), ['add a@1', 'add b@2', 'add c@3', 'add d@4', 'add e@5']);
    assert.equal(h.informer.hasSynced(), true);
    assert.equal(await h.informer.waitForSync(), true);
    assert.equal(h.informer.store.size, 5);

    assert.equal(h.lw.watches.length, 1);
    const w = h.lw.watch0.options;
    assert.equal(w.resourceVersion, '42');
    assert.equal(w.allowWatchBookmarks, true);
    assert.equal(w.timeoutSeconds, 300, 'random() = 0 gives the lower bound of 5-10 minutes');
    const status = h.informer.status;
    assert.equal(status.state, 'running');
    assert.equal(status.watching, true);
    assert.equal(status.lastSyncResourceVersion, '42');
    assert.equal(status.objects, 5);
    assert.equal(await h.stop(), 'stopped');
  });

  it('draws the server-side watch timeout from 5-10 minutes', async () => {
    const h = await started({ random: () => 0.999 });
    assert.equal(h.lw.watch0.options.timeoutSeconds, 599);
    await h.stop();
  });

  it('restarts a paginated list from the beginning when its continue token expires', async () => {
    const h = harness({ pageSize: 2 });
    h.lw.objects = [obj('a', '1'), obj('b', '2'), obj('c', '3')];
    let expired = false;
    h.lw.beforeList = (opts) => {
      if (opts.continue && !expired) {
        expired = true;
        throw gone();
      }
    };
    await h.start();
    assert.deepEqual(
      h.lw.listCalls.map((c) => c.continue ?? 'first'),
      ['first', 'token:2', 'first', 'token:2'],
    );
    assert.deepEqual(h.take(), ['add a@1', 'add b@2', 'add c@3'], 'each object once');
    assert.equal(h.metrics.listErrors, 0, 'an expired token is not a failed list');
    await h.stop();
  });

  it('starts a list over only once: a token that expires again fails the list, which backs off', async () => {
    const h = harness({ pageSize: 2 });
    h.lw.objects = [obj('a', '1'), obj('b', '2'), obj('c', '3')];
    h.lw.beforeList = (opts) => {
      if (opts.continue) throw gone();
    };
    await h.start();
    assert.equal(h.lw.listCalls.length, 4, 'first, expired, restart, expired again');
    assert.equal(h.metrics.listErrors, 1);
    assert.equal(h.informer.hasSynced(), false);
    assert.deepEqual(h.take(), [], 'no partial list reaches the handlers');
    h.lw.beforeList = () => {};
    await h.clock.step(800);
    assert.equal(h.informer.hasSynced(), true);
    assert.deepEqual(h.take(), ['add a@1', 'add b@2', 'add c@3']);
    await h.stop();
  });

  it('re-watches at once from the last seen resourceVersion when a watch ends normally', async () => {
    const h = await startedOver([obj('a', '1')]);
    const first = h.lw.watch0;
    first.emit('MODIFIED', obj('a', '11'));
    first.emit('ADDED', obj('b', '12'));
    assert.deepEqual(h.take(), ['update a@1 -> a@11', 'add b@12']);
    first.end();
    await settle();
    assert.equal(h.lw.watches.length, 2, 're-watched without waiting');
    assert.equal(h.lw.watch0.options.resourceVersion, '12');
    assert.equal(h.lw.listCalls.length, 1, 'no re-list');
    assert.equal(h.metrics.watches, 2);
    assert.deepEqual(h.metrics.watchErrors, []);
    await h.stop();
  });

  it('advances the resourceVersion on a bookmark without calling any handler', async () => {
    const h = await startedOver([obj('a', '1')]);
    h.lw.watch0.emit('BOOKMARK', { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: '77' } });
    assert.deepEqual(h.take(), []);
    assert.equal(h.informer.status.lastSyncResourceVersion, '77');
    assert.equal(h.informer.store.size, 1, 'a bookmark is not an object');
    assert.equal(h.informer.state, 'running');
    h.lw.watch0.end();
    await settle();
    assert.equal(h.lw.watch0.options.resourceVersion, '77');
    await h.stop();
  });

  it('on 410 Gone re-lists and delivers updates and deletes (with the last known object), nothing for unchanged ones', async () => {
    const h = await startedOver([obj('same', '1'), obj('changed', '2'), obj('vanished', '3')]);
    h.lw.watch0.emit('MODIFIED', obj('vanished', '20'));
    assert.deepEqual(h.take(), ['update vanished@3 -> vanished@20']);

    h.lw.objects = [obj('same', '1'), obj('changed', '30'), obj('new', '31')];
    h.lw.rv = '40';
    h.lw.watch0.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
    await settle();

    assert.equal(h.lw.listCalls.length, 2, 're-listed at once');
    assert.equal(h.metrics.relists, 1);
    assert.deepEqual(h.metrics.watchErrors, ['gone']);
    assert.deepEqual(h.take().sort(), ['add new@31', 'delete vanished@20', 'update changed@2 -> changed@30']);
    assert.deepEqual(h.informer.store.keys().sort(), ['ns/changed', 'ns/new', 'ns/same']);
    assert.equal(h.lw.watch0.options.resourceVersion, '40', 'watching from the new list');
    assert.equal(h.lw.watches.length, 2);
    assert.equal(h.informer.hasSynced(), true);
    await h.stop();
  });

  it('treats a watch that rejects with 410 like an ERROR event carrying 410', async () => {
    const h = await started();
    h.lw.watch0.emit('BOOKMARK', { metadata: { resourceVersion: '11' } });
    h.lw.watch0.fail(gone());
    await settle();
    assert.equal(h.lw.listCalls.length, 2);
    await h.stop();
  });

  it('backs off before re-listing when a fresh list is answered by 410 again and again', async () => {
    const h = await started();
    h.lw.watch0.fail(gone());
    await settle();
    assert.equal(h.lw.listCalls.length, 1, 'no event since the list: not an immediate re-list');
    await h.clock.step(799);
    assert.equal(h.lw.listCalls.length, 1);
    await h.clock.step(1);
    assert.equal(h.lw.listCalls.length, 2);
    await h.stop();
  });

  it('backs off exponentially on errors (800 ms doubling) and starts over after 2 healthy minutes', async () => {
    const h = harness({ inactivityTimeoutMs: 3_600_000 });
    h.lw.listErrors.push(
      new ApiError(0, 'TransportError', 'ECONNREFUSED'),
      new ApiError(503, 'ServiceUnavailable', 'x'),
      new ApiError(500, 'InternalError', 'y'),
    );
    await h.start();
    assert.equal(h.lw.listCalls.length, 1);
    const expectNextListAfter = async (ms: number): Promise<void> => {
      const before = h.lw.listCalls.length;
      await h.clock.step(ms - 1);
      assert.equal(h.lw.listCalls.length, before, `not yet after ${ms - 1} ms`);
      await h.clock.step(1);
      assert.equal(h.lw.listCalls.length, before + 1, `retried after ${ms} ms`);
    };
    await expectNextListAfter(800);
    await expectNextListAfter(1600);
    await expectNextListAfter(3200);
    assert.equal(h.informer.hasSynced(), true);
    assert.equal(h.metrics.listErrors, 3);
    assert.match(h.informer.status.lastError ?? '', /InternalError|500/);
    assert.equal(h.informer.status.consecutiveFailures, 0);

    // Still within 2 minutes of the last failure: the next delay keeps growing.
    h.lw.watch0.emit('BOOKMARK', { metadata: { resourceVersion: '11' } });
    h.lw.watch0.fail(new ApiError(500, 'InternalError', 'watch broke'));
    await settle();
    assert.equal(h.lw.watches.length, 1);
    await h.clock.step(6399);
    assert.equal(h.lw.watches.length, 1, 'waits 6.4 s');
    await h.clock.step(1);
    assert.equal(h.lw.watches.length, 2);
    assert.equal(h.lw.watch0.options.resourceVersion, '11', 'a failed watch resumes from the last resourceVersion, no re-list');
    assert.equal(h.lw.listCalls.length, 4);

    // Two healthy minutes later a failure starts over at 800 ms.
    await h.clock.step(120_000);
    h.lw.watch0.fail(new ApiError(0, 'TransportError', 'socket hang up'));
    await settle();
    await h.clock.step(799);
    assert.equal(h.lw.watches.length, 2);
    await h.clock.step(1);
    assert.equal(h.lw.watches.length, 3);
    assert.deepEqual(h.metrics.watchErrors, ['error', 'error']);
    await h.stop();
  });

  it('counts a watch that ends at once without events as a failure and backs off', async () => {
    const h = await started();
    h.lw.watch0.end();
    await settle();
    assert.equal(h.lw.watches.length, 1, 'no hot loop');
    await h.clock.step(800);
    assert.equal(h.lw.watches.length, 2);
    assert.deepEqual(h.metrics.watchErrors, ['short']);
    // A quiet watch that lasted its time is fine.
    await h.clock.step(5_000);
    h.lw.watch0.end();
    await settle();
    assert.equal(h.lw.watches.length, 3);
    await h.stop();
  });

  it('backs off and re-watches on a non-410 ERROR event', async () => {
    const h = await started();
    h.lw.watch0.emit('ERROR', { kind: 'Status', code: 500, reason: 'InternalError', message: 'etcd trouble' });
    assert.equal(h.lw.watch0.signal.aborted, true, 'the stream is closed at once');
    await settle();
    assert.equal(h.lw.watches.length, 1);
    await h.clock.step(800);
    assert.equal(h.lw.watches.length, 2);
    assert.equal(h.lw.listCalls.length, 1);
    assert.match(h.informer.status.lastError ?? '', /etcd trouble/);
    await h.stop();
  });

  it('aborts a silent watch after the inactivity timeout and re-watches from the last resourceVersion', async () => {
    const h = await started({ inactivityTimeoutMs: 10_000 });
    const first = h.lw.watch0;
    await h.clock.step(9_999);
    assert.equal(first.open, true);
    first.emit('BOOKMARK', { metadata: { resourceVersion: '15' } });
    await h.clock.step(9_999);
    assert.equal(first.open, true, 'a bookmark counts as activity');
    await h.clock.step(1);
    assert.equal(first.signal.aborted, true, 'silent for 10 s: aborted');
    await settle();
    assert.equal(h.lw.watches.length, 2, 're-watched at once');
    assert.equal(h.lw.watch0.options.resourceVersion, '15');
    assert.deepEqual(h.metrics.watchErrors, ['inactive']);
    assert.equal(h.lw.listCalls.length, 1);
    await h.stop();
  });

  it('uses a 3 minute inactivity timeout by default', async () => {
    const h = await started();
    await h.clock.step(179_999);
    assert.equal(h.lw.watch0.open, true);
    await h.clock.step(1);
    assert.equal(h.lw.watches[0]!.signal.aborted, true);
    await h.stop();
  });

  it('strips managedFields and the last-applied annotation by default, from listed and watched objects', async () => {
    const h = harness();
    const fat = (name: string, rv: string): Obj =>
      obj(name, rv, { managedFields: [{ manager: 'kubectl' }], annotations: { [LAST_APPLIED_ANNOTATION]: '{"big":true}', keep: 'me' } });
    h.lw.objects = [fat('a', '1'), obj('b', '2', { managedFields: [{}], annotations: { [LAST_APPLIED_ANNOTATION]: '{}' } })];
    await h.start();
    h.lw.watch0.emit('ADDED', fat('c', '3'));
    for (const key of ['ns/a', 'ns/c']) {
      const cached = h.informer.store.get(key)!;
      assert.equal(cached.metadata?.managedFields, undefined, key);
      assert.deepEqual(cached.metadata?.annotations, { keep: 'me' }, key);
      assert.equal(cached.metadata?.uid, `uid-${key.slice(3)}`, 'the rest of metadata stays');
    }
    assert.equal('annotations' in h.informer.store.get('ns/b')!.metadata!, false, 'no empty annotations left');
    await h.stop();
  });

  it('applies a custom transform instead', async () => {
    const h = harness({ transform: (o) => ({ ...o, data: { transformed: 'yes' } }) });
    h.lw.objects = [obj('a', '1', { managedFields: [{}] })];
    await h.start();
    h.lw.watch0.emit('ADDED', obj('b', '2'));
    assert.deepEqual(h.informer.store.get('ns/a')?.data, { transformed: 'yes' });
    assert.deepEqual(h.informer.store.get('ns/b')?.data, { transformed: 'yes' });
    assert.notEqual(h.informer.store.get('ns/a')?.metadata?.managedFields, undefined, 'the default transform is replaced');
    await h.stop();
  });

  it('skips a watch event whose object is nameless or of another kind (counted, logged), and goes on watching', async () => {
    const logged: { msg: string; fields: unknown }[] = [];
    const logger: Logger = { ...nopLogger, warn: (msg, fields) => void logged.push({ msg, fields }), child: () => logger };
    const h = await startedOver([obj('a', '1')], { expectedType: { apiVersion: 'v1', kind: 'ConfigMap' }, logger });
    const w = h.lw.watch0;
    w.emit('MODIFIED', { apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'ns', resourceVersion: '11' } });
    w.emit('ADDED', {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'x', namespace: 'ns', resourceVersion: '12' },
      data: { secret: 'hunter2' },
    });
    w.emit('DELETED', { apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'a', namespace: 'ns', resourceVersion: '13' } });
    w.emit('ADDED', obj('b', '15'));

    assert.equal(h.informer.state, 'running');
    assert.deepEqual(h.metrics.malformed, ['no-name', 'wrong-kind', 'wrong-kind']);
    assert.deepEqual(h.take(), ['add b@15'], 'only the sound event reaches the cache and the handlers');
    assert.deepEqual(h.informer.store.keys().sort(), ['ns/a', 'ns/b'], 'the wrong-kind DELETED removed nothing');
    assert.equal(h.lw.watches.length, 1, 'the same watch goes on');
    assert.equal(h.lw.watch0.open, true);
    assert.equal(h.informer.status.lastSyncResourceVersion, '15', 'skipped events do not move the resourceVersion');
    assert.equal(logged.length, 3);
    assert.deepEqual(logged[1], {
      msg: 'skipping a malformed watch event',
      fields: { reason: 'wrong-kind', type: 'ADDED', kind: 'Secret', name: 'x' },
    });
    assert.ok(!JSON.stringify(logged).includes('hunter2'), 'the object itself is never logged');
    await h.stop();
  });

  it('skips a listed item that is null, nameless or of another kind, and caches the rest', async () => {
    const h = harness({ expectedType: { apiVersion: 'v1', kind: 'ConfigMap' }, pageSize: 2 });
    h.lw.objects = [
      obj('a', '1'),
      null,
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} },
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' } },
      obj('b', '2'),
    ];
    await h.start();
    assert.equal(h.informer.hasSynced(), true);
    assert.deepEqual(h.take(), ['add a@1', 'add b@2']);
    assert.deepEqual(h.metrics.malformed, ['no-object', 'no-name', 'wrong-kind']);
    await h.stop();
  });

  it('transforms listed items one by one as a streaming lister hands them over', async () => {
    const seen: string[] = [];
    const lw: ListerWatcher<Obj> = {
      async list(_opts, _signal, onItem) {
        assert.ok(onItem, 'the reflector asks for items one by one');
        onItem(obj('a', '1'));
        assert.deepEqual(seen, ['transform a'], 'transformed before the next item is decoded');
        onItem(obj('b', '2'));
        return { items: [], resourceVersion: '5' };
      },
      watch: (_o, _e, signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
    };
    const h = await started({ listerWatcher: lw, transform: (o) => (seen.push(`transform ${o.metadata?.name}`), o) });
    assert.deepEqual(h.take(), ['add a@1', 'add b@2']);
    await h.stop();
  });

  it('keeps the controller-owner index right through watch updates and deletes', async () => {
    const h = harness();
    const ref = (uid: string) => [{ apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', name: uid, uid, controller: true }];
    h.lw.objects = [obj('job', '1', { ownerReferences: ref('owner-1') })];
    await h.start();
    assert.deepEqual(h.informer.store.indexKeys(CONTROLLER_OWNER_INDEX, controllerOwnerKey('ns', 'owner-1')), ['ns/job']);
    h.lw.watch0.emit('MODIFIED', obj('job', '2', { ownerReferences: ref('owner-2') }));
    assert.deepEqual(h.informer.store.byIndex(CONTROLLER_OWNER_INDEX, controllerOwnerKey('ns', 'owner-1')), []);
    assert.deepEqual(h.informer.store.indexKeys(CONTROLLER_OWNER_INDEX, controllerOwnerKey('ns', 'owner-2')), ['ns/job']);
    h.lw.watch0.emit('DELETED', obj('job', '3', { ownerReferences: ref('owner-2') }));
    assert.deepEqual(h.informer.store.byIndex(CONTROLLER_OWNER_INDEX, controllerOwnerKey('ns', 'owner-2')), []);
    await h.stop();
  });

  it('delivers onDelete with the final object, skips unchanged resourceVersions and unknown deletes', async () => {
    const h = await startedOver([obj('a', '1')]);
    h.lw.watch0.emit('MODIFIED', obj('a', '1'));
    h.lw.watch0.emit('DELETED', obj('never-seen', '5'));
    assert.deepEqual(h.take(), [], 'same resourceVersion: no onUpdate; unknown object: no onDelete');
    h.lw.watch0.emit('DELETED', obj('a', '6'));
    assert.deepEqual(h.take(), ['delete a@6']);
    h.lw.watch0.emit('MODIFIED', obj('a', '7'));
    assert.deepEqual(h.take(), ['add a@7'], 'a modify of an unknown object is an add');
    await h.stop();
  });

  it('resyncs every period with onUpdate(obj, obj) for every cached object', async () => {
    const h = await startedOver([obj('a', '1'), obj('b', '2')], { resyncPeriodMs: 10_000, inactivityTimeoutMs: 3_600_000 });
    await h.clock.step(9_999);
    assert.deepEqual(h.take(), []);
    await h.clock.step(1);
    assert.deepEqual(h.take().sort(), ['update a@1 -> a@1', 'update b@2 -> b@2']);
    await h.clock.step(10_000);
    assert.equal(h.take().length, 2, 'and again');
    await h.stop();
    assert.equal(h.clock.timerCount, 0);
  });

  it('keeps delivering to the other handlers when one throws', async () => {
    const h = harness();
    h.informer.addEventHandler({
      onAdd: () => {
        throw new Error('handler bug');
      },
    });
    h.lw.objects = [obj('a', '1')];
    await h.start();
    h.lw.watch0.emit('ADDED', obj('b', '2'));
    assert.deepEqual(h.take(), ['add a@1', 'add b@2']);
    assert.equal(h.informer.state, 'running');
    await h.stop();
  });

  it("tells onAdd whether the object is part of the initial list: the first LIST and a late handler's replay, not watch adds or a re-list", async () => {
    const h = harness();
    const adds: string[] = [];
    h.informer.addEventHandler({ onAdd: (o, initial) => adds.push(`${describeObj(o)} ${initial === true}`) });
    h.lw.objects = [obj('listed', '1')];
    await h.start();
    h.lw.watch0.emit('ADDED', obj('created', '2'));
    h.lw.objects = [obj('listed', '1'), obj('created', '2'), obj('while-down', '3')];
    h.lw.rv = '10';
    h.lw.watch0.emit('ERROR', { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' });
    await settle();
    const late: string[] = [];
    h.informer.addEventHandler({ onAdd: (o, initial) => late.push(`${describeObj(o)} ${initial === true}`) });
    assert.deepEqual(adds, ['listed@1 true', 'created@2 false', 'while-down@3 false']);
    assert.deepEqual(late.sort(), ['created@2 true', 'listed@1 true', 'while-down@3 true']);
    await h.stop();
  });

  it('replays the cache as adds to a handler added while running, and can remove handlers', async () => {
    const h = harness();
    h.lw.objects = [obj('a', '1'), obj('b', '2')];
    await h.start();
    const late: string[] = [];
    const remove = h.informer.addEventHandler({
      onAdd: (o) => late.push(describeObj(o)),
      onDelete: (o) => late.push(`-${describeObj(o)}`),
    });
    assert.deepEqual(late.sort(), ['a@1', 'b@2']);
    remove();
    h.lw.watch0.emit('DELETED', obj('a', '3'));
    assert.deepEqual(late.sort(), ['a@1', 'b@2'], 'removed handlers hear nothing');
    await h.stop();
  });

  it('releases every timer and the watch when aborted while watching', async () => {
    const h = await started({ resyncPeriodMs: 30_000 });
    assert.ok(h.clock.timerCount >= 2, 'watchdog and resync timers are set');
    assert.equal(h.lw.openWatches, 1);
    assert.equal(await h.stop(), 'stopped');
    assert.equal(h.clock.timerCount, 0);
    assert.equal(h.lw.openWatches, 0);
    assert.equal(h.informer.state, 'stopped');
    assert.equal(h.informer.status.watching, false);
  });

  it('releases the backoff timer when aborted while backing off, and unblocks waitForSync', async () => {
    const h = harness();
    h.lw.listErrors.push(new ApiError(503, 'ServiceUnavailable', 'starting'));
    const sync = h.informer.waitForSync();
    await h.start();
    assert.equal(h.clock.timerCount, 1, 'the backoff sleep');
    assert.equal(await h.stop(), 'stopped');
    assert.equal(h.clock.timerCount, 0);
    assert.equal(await sync, false, 'never synced');
    assert.equal(await h.informer.waitForSync(), false, 'a stopped informer will not sync');
  });

  it('resolves waitForSync with false when its own signal aborts', async () => {
    const h = harness();
    const ac = new AbortController();
    const sync = h.informer.waitForSync(ac.signal);
    ac.abort();
    assert.equal(await sync, false);
  });

  it('fails (state "failed", run rejects) when the transform throws, leaving no timer behind', async () => {
    const h = harness({
      resyncPeriodMs: 10_000,
      transform: (o) => {
        if (o.metadata?.name === 'poison') throw new Error('transform bug');
        return o;
      },
    });
    h.lw.objects = [obj('a', '1')];
    await h.start();
    h.lw.watch0.emit('ADDED', obj('poison', '2'));
    const outcome = await h.outcome();
    assert.ok(outcome instanceof Error && /transform bug/.test(outcome.message));
    assert.equal(h.informer.state, 'failed');
    assert.match(h.informer.status.lastError ?? '', /transform bug/);
    assert.equal(h.clock.timerCount, 0);
    assert.equal(h.lw.openWatches, 0);
  });

  it('refuses to run twice', async () => {
    const h = await started();
    await assert.rejects(h.informer.run(new AbortController().signal), /run\(\) called again/);
    await h.stop();
    await assert.rejects(h.informer.run(new AbortController().signal), /run\(\) called again/);
  });
});

describe('Backoff', () => {
  it('doubles from 800 ms to a hard 30 s cap, jitter included', () => {
    const clock = new FakeClock();
    const backoff = new Backoff({ clock, random: () => 0 });
    assert.deepEqual(
      Array.from({ length: 8 }, () => backoff.next()),
      [800, 1600, 3200, 6400, 12800, 25600, 30000, 30000],
    );
    const jittery = new Backoff({ clock, random: () => 0.5 });
    assert.deepEqual([jittery.next(), jittery.next()], [1200, 2400], 'jitter 1: [d, 2d]');
    for (let i = 0; i < 10; i++) assert.ok(jittery.next() <= 30_000);
  });

  it('starts over after 2 minutes without a failure', async () => {
    const clock = new FakeClock();
    const backoff = new Backoff({ clock, random: () => 0 });
    backoff.next();
    backoff.next();
    await clock.step(119_999);
    assert.equal(backoff.next(), 3200, 'not yet 2 minutes');
    await clock.step(120_000);
    assert.equal(backoff.next(), 800);
  });

  it('rejects nonsense options', () => {
    assert.throws(() => new Backoff({ initialMs: 0 }), RangeError);
    assert.throws(() => new Backoff({ initialMs: 100, maxMs: 50 }), RangeError);
    assert.throws(() => new Backoff({ factor: 0.5 }), RangeError);
  });
});

describe('kubeListerWatcher', () => {
  /** A RestClient stand-in: records requests, answers lists, and streams the given lines. */
  function fakeRest(
    lines: string[],
    listBody: unknown = { metadata: { resourceVersion: '5', continue: 'next' }, items: [{ metadata: { name: 'a' } }] },
  ) {
    const calls: { method: string; path: string; query: unknown }[] = [];
    const rest = {
      async request(_method: string, path: string, opts: { query?: unknown }) {
        calls.push({ method: 'request', path, query: opts.query });
        return structuredClone(listBody);
      },
      /** As RestClient.list: items go to onItem, the rest is the answer. */
      async list(path: string, opts: { query?: unknown }, onItem: (item: unknown) => void) {
        calls.push({ method: 'list', path, query: opts.query });
        const { items, ...rest } = structuredClone(listBody) as { items?: unknown[] };
        for (const item of items ?? []) onItem(item);
        return { ...rest, items: [] };
      },
      async stream(path: string, query: unknown, signal: AbortSignal, onLine: (line: string) => void) {
        calls.push({ method: 'stream', path, query });
        for (const line of lines) {
          if (signal.aborted) return;
          onLine(line);
        }
      },
    };
    return { rest: rest as unknown as RestClient, calls };
  }
  const CONFIGMAPS = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true };

  it('lists a page with limit and continue, filling in apiVersion and kind', async () => {
    const { rest, calls } = fakeRest([]);
    const lw = kubeListerWatcher<Obj>(rest, CONFIGMAPS, { namespace: 'ns', labelSelector: 'app=x' });
    const page = await lw.list({ limit: 50, continue: 'tok' });
    assert.equal(calls[0]!.path, '/api/v1/namespaces/ns/configmaps');
    assert.deepEqual(calls[0]!.query, { labelSelector: 'app=x', fieldSelector: undefined, limit: 50, continue: 'tok' });
    assert.equal(page.resourceVersion, '5');
    assert.equal(page.continue, 'next');
    assert.equal(page.items[0]!.apiVersion, 'v1');
    assert.equal(page.items[0]!.kind, 'ConfigMap');
  });

  it('watches with bookmarks and the timeout, passing events on in order', async () => {
    const { rest, calls } = fakeRest([
      JSON.stringify({ type: 'ADDED', object: obj('a', '6') }),
      JSON.stringify({ type: 'BOOKMARK', object: { metadata: { resourceVersion: '7' } } }),
    ]);
    const seen: string[] = [];
    await kubeListerWatcher<Obj>(rest, CONFIGMAPS).watch(
      { resourceVersion: '5', timeoutSeconds: 400, allowWatchBookmarks: true },
      (e) => seen.push(`${e.type} ${(e.object as Obj).metadata?.resourceVersion}`),
      new AbortController().signal,
    );
    assert.equal(calls[0]!.path, '/api/v1/configmaps');
    assert.deepEqual(calls[0]!.query, {
      labelSelector: undefined,
      fieldSelector: undefined,
      watch: true,
      resourceVersion: '5',
      timeoutSeconds: 400,
      allowWatchBookmarks: true,
    });
    assert.deepEqual(seen, ['ADDED 6', 'BOOKMARK 7']);
  });

  it('turns an ERROR event with a 410 Status into an ApiError that isGone, and stops there', async () => {
    const { rest } = fakeRest([
      JSON.stringify({
        type: 'ERROR',
        object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 5 (9)' },
      }),
      JSON.stringify({ type: 'ADDED', object: obj('late', '10') }),
    ]);
    const seen: string[] = [];
    const err = await kubeListerWatcher<Obj>(rest, CONFIGMAPS)
      .watch({ resourceVersion: '5' }, (e) => seen.push(e.type), new AbortController().signal)
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    assert.ok(err instanceof ApiError);
    assert.equal(err.code, 410);
    assert.equal(isGone(err), true);
    assert.deepEqual(seen, [], 'neither the ERROR nor what follows is delivered');
  });

  it('passes a line that is not a JSON object on as UNPARSEABLE and goes on with the stream', async () => {
    const { rest } = fakeRest(['{"type":"ADDED",', 'null', '42', JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } })]);
    const seen: WatchEvent<Obj>[] = [];
    await kubeListerWatcher<Obj>(rest, CONFIGMAPS).watch({ resourceVersion: '1' }, (e) => seen.push(e), new AbortController().signal);
    assert.deepEqual(seen, [
      { type: 'UNPARSEABLE', length: 16 },
      { type: 'UNPARSEABLE', length: 4 },
      { type: 'UNPARSEABLE', length: 2 },
      { type: 'ADDED', object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } } },
    ]);
  });

  it('decodes a list page item by item through RestClient.list when asked to, filling in apiVersion and kind', async () => {
    const { rest, calls } = fakeRest([], {
      metadata: { resourceVersion: '5' },
      items: [{ metadata: { name: 'a' } }, null, { apiVersion: 'v2', kind: 'Other', metadata: { name: 'b' } }],
    });
    const items: unknown[] = [];
    const page = await kubeListerWatcher<Obj>(rest, CONFIGMAPS).list({ limit: 10 }, undefined, (item) => items.push(item));
    assert.equal(calls[0]!.method, 'list');
    assert.deepEqual(items, [
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'a' } },
      null,
      { apiVersion: 'v2', kind: 'Other', metadata: { name: 'b' } },
    ]);
    assert.deepEqual(page, { items: [], resourceVersion: '5', continue: undefined });
  });
});
