/**
 * The ScheduledEcho reconciler against a fake API server: a CronJob the server refuses for good
 * (a schedule out of range) or a name taken by a CronJob it does not control stalls the
 * ScheduledEcho (Stalled=True, Ready=False, observedGeneration, one Warning Event, a
 * TerminalError); a pass that meets the same stall writes nothing; the cure makes it Ready.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1CronJob } from '@kubernetes/client-node';
import type { ScheduledEcho } from '../../src/api/scheduledecho.js';
import { STALLED_RECHECK_MS } from '../../src/runtime/reconcile/stalled.js';
import { ScheduledEchoReconciler } from '../../src/controllers/scheduledecho/reconciler.js';
import { ApiError } from '../../src/kube/errors.js';
import { Store } from '../../src/runtime/cache/index.js';
import { isTerminalError, terminalErrorIn } from '../../src/runtime/controller/terminal.js';
import { nopLogger } from '../../src/runtime/log.js';
import { KubeClient } from '../../src/runtime/client/index.js';

const SE_PATH = '/apis/mmontes.io/v1alpha1/namespaces/ns/scheduledechos/tick';
const CJ_PATH = '/apis/batch/v1/namespaces/ns/cronjobs/tick';

function scheduledEcho(schedule: string, generation = 1): ScheduledEcho {
  return {
    apiVersion: 'mmontes.io/v1alpha1',
    kind: 'ScheduledEcho',
    metadata: { name: 'tick', namespace: 'ns', uid: 'se-uid', generation, resourceVersion: '10' },
    spec: { message: 'hi', schedule },
  };
}

/** What the server says of a CronJob whose schedule its validation refuses. */
function invalidSchedule(schedule: string): ApiError {
  const message = `CronJob.batch "tick" is invalid: spec.schedule: Invalid value: "${schedule}": end of range (61) above maximum (59): 61`;
  return new ApiError(422, 'Invalid', `PATCH ${CJ_PATH}: ${message}`, {
    kind: 'Status',
    status: 'Failure',
    message,
    reason: 'Invalid',
    code: 422,
    details: { causes: [{ field: 'spec.schedule', message: 'Invalid value' }] },
  });
}

/**
 * Applies (PATCH apply-patch) store the CronJob, refused with 409 when a create-only apply finds
 * the name taken, or with what `refuse` returns; status PATCHes merge as the server does.
 */
class FakeApi {
  writes: { method: string; path: string; body?: any }[] = [];
  existing = new Map<string, any>();
  refuse: (body: any) => ApiError | undefined = () => undefined;
  /** Status PATCHes still to refuse with 409 (the cache behind). */
  conflictStatus = 0;
  private rv = 100;

  async request<T>(method: string, path: string, opts: { body?: any; contentType?: string } = {}): Promise<T> {
    if (method === 'GET') {
      const found = this.existing.get(path);
      if (!found) throw new ApiError(404, 'NotFound', `${path} not found`);
      return found as T;
    }
    const body = opts.body;
    if (method === 'PATCH' && path.endsWith('/status')) {
      if (this.conflictStatus > 0) {
        this.conflictStatus--;
        throw new ApiError(409, 'Conflict', 'the object has been modified');
      }
      const stored = this.existing.get(path.slice(0, -'/status'.length));
      if (body.metadata?.resourceVersion !== stored.metadata.resourceVersion) throw new ApiError(409, 'Conflict', 'modified');
      this.writes.push({ method, path, body });
      const updated = { ...stored, metadata: { ...stored.metadata, resourceVersion: String(++this.rv) }, status: body.status };
      this.existing.set(path.slice(0, -'/status'.length), updated);
      return updated as T;
    }
    if (method === 'PATCH' && opts.contentType === 'application/apply-patch+yaml') {
      const refusal = this.refuse(body);
      if (refusal) throw refusal;
      const stored = this.existing.get(path);
      if (body.metadata.resourceVersion === '1' && stored) throw new ApiError(409, 'Conflict', 'the object has been modified');
      this.writes.push({ method, path, body });
      const applied = {
        ...body,
        metadata: { ...body.metadata, uid: stored?.metadata.uid ?? 'cj-uid', resourceVersion: String(++this.rv) },
      };
      this.existing.set(path, applied);
      return applied as T;
    }
    throw new Error(`unexpected ${method} ${path}`);
  }
}

function setup(se: ScheduledEcho) {
  const ses = new Store<ScheduledEcho & { metadata: any }>();
  ses.add(se);
  const cronJobs = new Store<V1CronJob & { metadata: any }>();
  const api = new FakeApi();
  api.existing.set(SE_PATH, se);
  const events: string[] = [];
  const reconciler = new ScheduledEchoReconciler({
    scheduledEchos: ses,
    cronJobs,
    client: new KubeClient(api),
    events: { recordEvent: (_o, type, reason, message) => void events.push(`${type} ${reason} ${message}`) },
    jobImage: 'busybox',
    now: () => new Date('2026-01-01T00:00:00Z'),
  });
  const ctx = { log: nopLogger, signal: new AbortController().signal, reconcileID: 'r' };
  const pass = () => reconciler.reconcile('ns/tick', ctx).catch((err: unknown) => err);
  /** The informers deliver what the server now holds. */
  const caughtUp = () => {
    ses.add(api.existing.get(SE_PATH));
    const cj = api.existing.get(CJ_PATH);
    if (cj?.metadata.labels) cronJobs.add(cj);
  };
  return { api, events, pass, caughtUp, ses };
}

const condition = (obj: any, type: string) => obj.status?.conditions?.find((c: any) => c.type === type);

describe('ScheduledEchoReconciler: refusals only a change can cure stall it', () => {
  it('schedule "61 * * * *": Stalled=True with the server message, Ready=False, observedGeneration, one Event; again: nothing; fixed: Ready', async () => {
    const s = setup(scheduledEcho('61 * * * *'));
    s.api.refuse = (body) => (body.spec.schedule === '61 * * * *' ? invalidSchedule(body.spec.schedule) : undefined);
    const err = await s.pass();
    assert.ok(isTerminalError(err), 'a TerminalError');
    assert.equal(terminalErrorIn(err)!.recheckAfterMs, undefined, 'a new generation wakes it; nothing else can');
    const stalled = s.api.existing.get(SE_PATH);
    const message = invalidSchedule('61 * * * *').status!.message!;
    assert.equal(stalled.status.observedGeneration, 1);
    assert.deepEqual(
      stalled.status.conditions.map((c: any) => [c.type, c.status, c.reason, c.message, c.observedGeneration]),
      [
        ['Ready', 'False', 'Invalid', message, 1],
        ['Stalled', 'True', 'Invalid', message, 1],
      ],
    );
    assert.deepEqual(s.events, [`Warning Invalid ${message}`]);

    for (let i = 0; i < 3; i++) {
      s.caughtUp();
      const writes = s.api.writes.length;
      assert.ok(isTerminalError(await s.pass()), 'still terminal');
      assert.deepEqual(s.api.writes.slice(writes), [], 'a pass over the same stall writes nothing');
    }
    assert.equal(s.events.length, 1, 'and records no Event');

    const fixed = { ...s.api.existing.get(SE_PATH), spec: { message: 'hi', schedule: '1 * * * *' } };
    fixed.metadata = { ...fixed.metadata, generation: 2 };
    s.api.existing.set(SE_PATH, fixed);
    s.ses.add(fixed);
    assert.equal(await s.pass(), undefined);
    const ready = s.api.existing.get(SE_PATH);
    assert.equal(s.api.existing.get(CJ_PATH).spec.schedule, '1 * * * *');
    assert.equal(ready.status.observedGeneration, 2);
    assert.deepEqual(
      ready.status.conditions.map((c: any) => [c.type, c.status]),
      [['Ready', 'True']],
      'Stalled removed',
    );
  });

  it('a CronJob it does not control holds the name: NameTaken stall with a recheck that writes nothing; the CronJob gone, Ready', async () => {
    const s = setup(scheduledEcho('0 0 1 1 *'));
    s.api.existing.set(CJ_PATH, { metadata: { name: 'tick', namespace: 'ns', uid: 'foreign' }, spec: { schedule: '* * * * *' } });
    const err = await s.pass();
    assert.equal(terminalErrorIn(err)?.recheckAfterMs, STALLED_RECHECK_MS, 'rechecked: the foreign CronJob is not watched');
    const stalled = s.api.existing.get(SE_PATH);
    assert.equal(condition(stalled, 'Stalled')?.reason, 'NameTaken');
    assert.match(condition(stalled, 'Ready')?.message, /CronJob ns\/tick already exists and is not controlled by this ScheduledEcho/);
    assert.equal(stalled.status.observedGeneration, 1);
    assert.equal(s.events.length, 1);
    assert.equal(s.api.existing.get(CJ_PATH).metadata.uid, 'foreign', 'never written to');

    s.caughtUp();
    const writes = s.api.writes.length;
    assert.ok(isTerminalError(await s.pass()), 'the recheck: still terminal');
    assert.deepEqual(s.api.writes.slice(writes), [], 'the recheck writes nothing');
    assert.equal(s.events.length, 1, 'and records no Event');

    s.api.existing.delete(CJ_PATH);
    assert.equal(await s.pass(), undefined);
    const ready = s.api.existing.get(SE_PATH);
    assert.deepEqual(
      ready.status.conditions.map((c: any) => [c.type, c.status]),
      [['Ready', 'True']],
    );
    assert.equal(s.api.existing.get(CJ_PATH).metadata.ownerReferences[0].uid, 'se-uid');
  });

  it('a stall whose status write conflicts is retried with backoff (not terminal), and recorded with its one Event by the next pass', async () => {
    const s = setup(scheduledEcho('61 * * * *'));
    s.api.refuse = (body) => invalidSchedule(body.spec.schedule);
    s.api.conflictStatus = 1;
    const err = (await s.pass()) as ApiError;
    assert.equal(err.code, 409, 'the conflict goes back to the queue');
    assert.ok(!isTerminalError(err), 'not terminal: the stall is not recorded yet');
    assert.deepEqual(s.events, [], 'no Event without the status');
    assert.ok(isTerminalError(await s.pass()), 'the next pass records it');
    assert.equal(condition(s.api.existing.get(SE_PATH), 'Stalled')?.status, 'True');
    assert.equal(s.events.length, 1);
  });

  it('a healthy ScheduledEcho: the second pass writes nothing (no new writes from this work)', async () => {
    const s = setup(scheduledEcho('0 0 1 1 *'));
    assert.equal(await s.pass(), undefined);
    s.caughtUp();
    const writes = s.api.writes.length;
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.api.writes.slice(writes), []);
    assert.equal(condition(s.api.existing.get(SE_PATH), 'Stalled'), undefined);
  });
});
