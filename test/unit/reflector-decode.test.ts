/**
 * A watch event that does not decode (issue 32, item 5): the reflector ends the watch, as
 * apimachinery's StreamWatcher does, and re-watches after its backoff from the resourceVersion of
 * the last event it applied, so the server sends the lost event again and the cache ends up
 * holding it. Before, the line was skipped, the next event moved the resourceVersion past it, and
 * the cache kept the old object until a 410.
 *
 * The fake here is a server with a history: every watch replays the events after the
 * resourceVersion it starts from, as the API server does; `mangle` replaces one event's line in
 * the next watches that carry it, as a broken proxy would.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { KubeObject } from '../../src/runtime/cache/index.js';
import {
  Reflector,
  type InformerMetrics,
  type ListerWatcher,
  type ReflectorSink,
  type WatchEvent,
  type WatchOptions,
} from '../../src/runtime/informer/index.js';
import { nopLogger, type Logger } from '../../src/runtime/log.js';
import { FakeClock, flushMicrotasks } from '../../src/runtime/testing/clock.js';

interface Note extends KubeObject {
  spec?: { message: string };
}

const TYPE = { apiVersion: 'mmontes.io/v1alpha1', kind: 'Note' };

function note(name: string, rv: string, message: string): Note {
  return { ...TYPE, metadata: { name, namespace: 'ns', resourceVersion: rv }, spec: { message } };
}

interface Sound {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: Note;
}

class ReplayingServer implements ListerWatcher<Note> {
  readonly history: Sound[] = [];
  /** resourceVersion -> what the next watches deliver instead of that event, one entry per watch. */
  readonly mangle = new Map<string, unknown[]>();
  readonly watches: WatchOptions[] = [];

  async list(): Promise<{ items: Note[]; resourceVersion: string }> {
    return { items: [], resourceVersion: '10' };
  }

  watch(options: WatchOptions, onEvent: (event: WatchEvent<Note>) => void, signal: AbortSignal): Promise<void> {
    this.watches.push(options);
    for (const event of this.history) {
      if (signal.aborted) break;
      const rv = event.object.metadata!.resourceVersion!;
      if (Number(rv) <= Number(options.resourceVersion)) continue;
      const instead = this.mangle.get(rv);
      onEvent((instead?.length ? instead.shift() : structuredClone(event)) as WatchEvent<Note>);
    }
    if (signal.aborted) return Promise.resolve();
    return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
  }
}

class RecordingSink implements ReflectorSink<Note> {
  readonly objects = new Map<string, Note>();
  readonly applied: string[] = [];
  replace(): void {}
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: Note): void {
    this.applied.push(`${type} ${obj.metadata!.name}@${obj.metadata!.resourceVersion}`);
    if (type === 'DELETED') this.objects.delete(obj.metadata!.name!);
    else this.objects.set(obj.metadata!.name!, obj);
  }
}

function recordingMetrics(): InformerMetrics & { malformed: string[]; watchErrors: string[] } {
  const malformed: string[] = [];
  const watchErrors: string[] = [];
  return {
    malformed,
    watchErrors,
    listRequest() {},
    listError() {},
    relist() {},
    watchStarted() {},
    watchError: (reason) => void watchErrors.push(reason),
    malformedEvent: (reason) => void malformed.push(reason),
  };
}

/**
 * A running reflector over a server whose history is a@11 (hello), a@12 (changed), b@13; the
 * watches' lines of 12 (and 13) are replaced by `mangled` (and `mangled13`), one per watch.
 */
async function running(mangled: unknown[], mangled13: unknown[] = []) {
  const server = new ReplayingServer();
  server.history.push(
    { type: 'ADDED', object: note('a', '11', 'hello') },
    { type: 'MODIFIED', object: note('a', '12', 'changed') },
    { type: 'ADDED', object: note('b', '13', 'later') },
  );
  server.mangle.set('12', mangled);
  server.mangle.set('13', mangled13);
  const sink = new RecordingSink();
  const metrics = recordingMetrics();
  const clock = new FakeClock();
  const logged: { msg: string; fields: unknown }[] = [];
  const logger: Logger = { ...nopLogger, warn: (msg, fields) => void logged.push({ msg, fields }), child: () => logger };
  const reflector = new Reflector<Note>(server, sink, { clock, metrics, logger, random: () => 0, expectedType: TYPE });
  const cancel = new AbortController();
  const done = reflector.run(cancel.signal);
  await flushMicrotasks(50);
  const stop = async (): Promise<void> => {
    cancel.abort();
    await done;
  };
  return { server, sink, metrics, clock, logged, reflector, stop };
}

const secret = 'hunter2-do-not-log';

/** Lines the API server could never have sent, each as the lister-watcher hands it over. */
const UNDECODABLE: [string, unknown, string][] = [
  ['a line that is not JSON', { type: 'UNPARSEABLE', length: 57 }, 'unparseable'],
  ['JSON that is not an object', null, 'unparseable'],
  ['an unknown event type', { type: 'CHANGED', object: note('a', '12', secret) }, 'unknown-type'],
  ['an event whose object is not an object', { type: 'MODIFIED', object: null }, 'no-object'],
];

describe('Reflector: a watch event that does not decode', () => {
  for (const [what, line, reason] of UNDECODABLE) {
    it(`${what}: ends the watch, counts it, and re-watches from the last applied event after backoff`, async () => {
      const r = await running([line]);
      assert.deepEqual(r.sink.applied, ['ADDED a@11'], 'nothing after the bad line is read');
      assert.deepEqual(r.metrics.malformed, [reason]);
      assert.deepEqual(r.metrics.watchErrors, ['undecodable']);
      assert.equal(r.reflector.status.watching, false);
      assert.equal(r.reflector.status.lastSyncResourceVersion, '11', 'the resourceVersion of the last event applied');

      await r.clock.step(799);
      assert.equal(r.server.watches.length, 1, 'waits out the backoff');
      await r.clock.step(1);
      assert.equal(r.server.watches.length, 2);
      assert.equal(r.server.watches[1]!.resourceVersion, '11');
      assert.deepEqual(r.sink.applied, ['ADDED a@11', 'MODIFIED a@12', 'ADDED b@13'], 'the lost event came again');
      assert.equal(r.sink.objects.get('a')?.spec?.message, 'changed', 'the cache holds the change');
      assert.equal(r.reflector.status.lastSyncResourceVersion, '13');
      assert.equal(r.reflector.status.watching, true);
      assert.equal(r.reflector.status.consecutiveFailures, 0);
      assert.deepEqual(
        r.logged.map((l) => l.msg),
        ['watch event could not be decoded; will re-watch from the last applied resourceVersion after backoff'],
      );
      assert.deepEqual(r.logged[0]!.fields, { reason, resourceVersion: '11', failures: 1 });
      assert.ok(!JSON.stringify(r.logged).includes(secret), 'what the line held is never logged');
      await r.stop();
      assert.equal(r.clock.timerCount, 0, 'no timer left behind');
    });
  }

  it('a stream that stays bad is re-watched with a growing backoff, never in a hot loop', async () => {
    const r = await running(Array.from({ length: 10 }, () => ({ type: 'UNPARSEABLE', length: 3 })));
    for (const [i, wait] of [800, 1_600, 3_200, 6_400].entries()) {
      assert.equal(r.server.watches.length, i + 1);
      await r.clock.step(wait - 1);
      assert.equal(r.server.watches.length, i + 1, `waits ${wait} ms`);
      await r.clock.step(1);
    }
    assert.equal(r.server.watches.length, 5);
    assert.ok(
      r.server.watches.slice(1).every((w) => w.resourceVersion === '11'),
      'each from the last applied event',
    );
    assert.deepEqual(r.sink.applied, ['ADDED a@11']);
    assert.deepEqual(r.metrics.watchErrors, Array(5).fill('undecodable'));
    assert.equal(r.reflector.status.consecutiveFailures, 5);
    await r.stop();
  });

  it('an event that decodes but cannot be cached (no name, another kind) is skipped and the watch goes on', async () => {
    const r = await running(
      [{ type: 'MODIFIED', object: { ...TYPE, metadata: { namespace: 'ns', resourceVersion: '12' } } }],
      [{ type: 'ADDED', object: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'b', namespace: 'ns', resourceVersion: '13' } } }],
    );
    assert.deepEqual(r.sink.applied, ['ADDED a@11']);
    assert.deepEqual(r.metrics.malformed, ['no-name', 'wrong-kind']);
    assert.equal(r.reflector.status.lastSyncResourceVersion, '11', 'skipped events do not move the resourceVersion');
    assert.deepEqual(r.metrics.watchErrors, []);
    assert.equal(r.server.watches.length, 1, 'the same watch goes on');
    assert.equal(r.reflector.status.watching, true);
    await r.stop();
  });
});
