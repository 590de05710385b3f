import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import { containsDesired } from '../../src/controllers/common/compare.js';
import { derivedName, nameWithin, shortHash } from '../../src/controllers/common/naming.js';
import { desiredJob, jobNameFor } from '../../src/controllers/echo/desired.js';
import { EchoReconciler } from '../../src/controllers/echo/reconciler.js';
import { echoStatus, reconciledOk, runState } from '../../src/controllers/echo/status.js';
import { ApiError } from '../../src/kube/errors.js';
import { nopLogger } from '../../src/runtime/log.js';
import { ReadYourWrites, Store } from '../../src/runtime/cache/index.js';

function echo(name: string, message: string, extra: Partial<Echo['metadata']> = {}): Echo {
  return {
    apiVersion: 'mmontes.io/v1alpha1',
    kind: 'Echo',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, generation: 1, resourceVersion: '1', ...extra },
    spec: { message },
  };
}

/**
 * Records writes. Answers POSTs with the body, like the server would (plus a resourceVersion), and
 * status PATCHes like the server: 404 without the object, 409 when the patch names another
 * resourceVersion, else the object with the status merged and a new resourceVersion.
 */
class FakeApi {
  writes: { method: string; path: string; body?: any }[] = [];
  /** Thrown by the next request of that method. */
  failNext: { method: string; err: ApiError } | undefined;
  existing = new Map<string, any>();
  async request<T>(method: string, path: string, opts: { body?: unknown } = {}): Promise<T> {
    if (this.failNext?.method === method) {
      const { err } = this.failNext;
      this.failNext = undefined;
      throw err;
    }
    if (method === 'GET') {
      const found = this.existing.get(path);
      if (!found) throw new ApiError(404, 'NotFound', `${path} not found`);
      return found as T;
    }
    const body = opts.body as any;
    if (method === 'PATCH' && path.endsWith('/status')) {
      const objectPath = path.slice(0, -'/status'.length);
      const stored = this.existing.get(objectPath);
      if (!stored) throw new ApiError(404, 'NotFound', `${objectPath} not found`);
      const precondition = body.metadata?.resourceVersion;
      if (precondition !== undefined && precondition !== stored.metadata.resourceVersion) {
        throw new ApiError(409, 'Conflict', 'the object has been modified');
      }
      this.writes.push({ method, path, body });
      const updated = {
        ...stored,
        metadata: { ...stored.metadata, resourceVersion: String(Number(stored.metadata.resourceVersion) + 1) },
        status: body.status,
      };
      this.existing.set(objectPath, updated);
      return updated as T;
    }
    this.writes.push({ method, path, body });
    return { ...body, metadata: { ...body.metadata, resourceVersion: '1' } } as T;
  }
}

/** `e` with the status a pass writes before it creates the Job. */
function claimed(e: Echo): Echo {
  return { ...e, status: echoStatus(e, jobNameFor(e), undefined, reconciledOk, () => new Date('2025-12-31T00:00:00Z')) };
}

function setup(e: Echo, readYourWrites = false) {
  const echos = new Store<Echo & { metadata: any }>();
  echos.add(e);
  const ryw = new ReadYourWrites<any>(echos, { addEventHandler: () => undefined });
  const echoCache = readYourWrites ? { get: (k: string) => ryw.get(k), byIndex: () => [], wrote: (o: any) => ryw.wrote(o) } : echos;
  const jobs = new Store<V1Job & { metadata: any }>();
  const api = new FakeApi();
  // What the server holds: the same Echo as the cache (a test may make them differ).
  api.existing.set(`/apis/mmontes.io/v1alpha1/namespaces/ns/echos/${e.metadata.name}`, e as any);
  const events: string[] = [];
  const reconciler = new EchoReconciler({
    echos: echoCache,
    jobs: jobs,
    api,
    events: { recordEvent: (_o, _t, reason) => events.push(reason) },
    jobImage: 'busybox',
    now: () => new Date('2026-01-01T00:00:00Z'),
  });
  const ctx = { log: nopLogger, signal: new AbortController().signal, reconcileID: 'r' };
  return { echos, jobs, api, events, reconciler, ctx };
}

describe('Echo naming and desired Job', () => {
  it('gives the same name for the same Echo and message, another for another message or UID', () => {
    const a = echo('hello', 'one');
    assert.equal(jobNameFor(a), jobNameFor(echo('hello', 'one')));
    assert.notEqual(jobNameFor(a), jobNameFor(echo('hello', 'two')));
    assert.notEqual(jobNameFor(a), jobNameFor(echo('hello', 'one', { uid: 'other' })));
  });

  it('keeps long names within 63 characters as a valid label value', () => {
    const name = jobNameFor(echo('a'.repeat(250), 'x'));
    assert.ok(name.length <= 63);
    assert.match(name, /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);
    assert.equal(derivedName('dots.in.name', 'h', 63), 'dots-in-name-h');
    assert.equal(nameWithin('short', 52), 'short');
    assert.ok(nameWithin('b'.repeat(60), 52).length <= 52);
  });

  it('keeps the names of existing Jobs across releases (a changed hash would start every run again)', () => {
    // Pinned values: an upgrade that named Jobs differently would make a second Job for every Echo.
    assert.equal(shortHash('x', 'y'), 'beiprmkzne');
    assert.equal(jobNameFor(echo('hello', 'one', { uid: 'u-1' })), `hello-${shortHash('u-1', 'one')}`);
  });

  it('runs the message literally, without a shell', () => {
    const job = desiredJob(echo('x', '$(id) "; rm -rf / `x`'), 'busybox');
    const c = job.spec!.template.spec!.containers[0]!;
    assert.deepEqual(c.command, ['printf', '%s\\n', '$(id) "; rm -rf / `x`']);
    assert.equal(c.args, undefined);
    assert.equal(job.metadata!.ownerReferences![0]!.controller, true);
  });
});

describe('Echo status from its Job', () => {
  it('maps the Job conditions to phases', () => {
    assert.equal(runState(undefined).phase, 'Pending');
    assert.equal(runState({ status: {} }).phase, 'Pending');
    assert.equal(runState({ status: { startTime: new Date() } }).phase, 'Running');
    assert.equal(runState({ status: { conditions: [{ type: 'Complete', status: 'True' }] } }).phase, 'Succeeded');
    const failed = runState({ status: { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded' }] } });
    assert.equal(failed.phase, 'Failed');
    assert.equal(failed.succeeded.reason, 'BackoffLimitExceeded');
  });
});

describe('EchoReconciler', () => {
  it('creates one Job, writes status once, and writes nothing when run again over the same state', async () => {
    const s = setup(echo('hello', 'hi'));
    await s.reconciler.reconcile('ns/hello', s.ctx);
    // The status the run starts with goes first: written conditionally, it confirms the cache.
    assert.deepEqual(
      s.api.writes.map((w) => w.method),
      ['PATCH', 'POST'],
      'no status write after the create: it would be the same',
    );
    assert.equal(s.api.writes[0]!.body.metadata.resourceVersion, '1');
    assert.equal(s.api.writes[0]!.body.status.jobName, s.api.writes[1]!.body.metadata.name);
    assert.equal(s.api.writes[0]!.body.status.phase, 'Pending');
    // The informers deliver what was written.
    s.jobs.add({ ...s.api.writes[1]!.body, metadata: { ...s.api.writes[1]!.body.metadata, uid: 'job-uid' } });
    s.echos.add(s.api.existing.get('/apis/mmontes.io/v1alpha1/namespaces/ns/echos/hello'));
    s.api.writes = [];
    await s.reconciler.reconcile('ns/hello', s.ctx);
    assert.deepEqual(s.api.writes, [], 'a second pass over the same state writes nothing');
    assert.deepEqual(s.events, ['JobCreated']);
  });

  it('adopts its own Job when the cache lags (AlreadyExists), and refuses a foreign one', async () => {
    const e = echo('hello', 'hi');
    const s = setup(e);
    const name = jobNameFor(e);
    s.api.failNext = { method: 'POST', err: new ApiError(409, 'AlreadyExists', 'exists') };
    s.api.existing.set(`/apis/batch/v1/namespaces/ns/jobs/${name}`, {
      metadata: {
        name,
        ownerReferences: [{ apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', name: 'hello', uid: 'uid-hello', controller: true }],
      },
    });
    await s.reconciler.reconcile('ns/hello', s.ctx);
    assert.deepEqual(
      s.api.writes.map((w) => w.method),
      ['PATCH'],
      'no second create, only status',
    );

    const t = setup(e);
    t.api.failNext = { method: 'POST', err: new ApiError(409, 'AlreadyExists', 'exists') };
    t.api.existing.set(`/apis/batch/v1/namespaces/ns/jobs/${name}`, { metadata: { name, ownerReferences: [] } });
    await assert.rejects(t.reconciler.reconcile('ns/hello', t.ctx), /not controlled by this Echo/);
    const failure = t.api.writes.filter((w) => w.path.endsWith('/status')).at(-1);
    assert.equal(
      failure?.body.status.conditions.find((c: any) => c.type === 'Reconciled').status,
      'False',
      'written over our own status write of this pass',
    );
    assert.deepEqual(t.events, ['ReconcileFailed']);
  });

  it('does not run a finished Echo again when its Job is gone, and replaces the Job of an old message', async () => {
    const e = echo('hello', 'hi');
    const done = { ...e, status: { phase: 'Succeeded' as const, jobName: jobNameFor(e) } };
    const s = setup(done);
    await s.reconciler.reconcile('ns/hello', s.ctx);
    assert.deepEqual(s.api.writes, []);

    const edited = { ...done, spec: { message: 'new' }, metadata: { ...done.metadata, generation: 2 } };
    const u = setup(edited);
    u.jobs.add({ ...desiredJob(e, 'busybox'), metadata: { ...desiredJob(e, 'busybox').metadata, uid: 'old-job' } });
    await u.reconciler.reconcile('ns/hello', u.ctx);
    assert.deepEqual(
      u.api.writes.map((w) => w.method),
      ['DELETE', 'PATCH', 'POST'],
    );
    assert.equal(u.api.writes[0]!.body.preconditions.uid, 'old-job');
    assert.equal(u.api.writes[2]!.body.metadata.name, jobNameFor(edited));
  });

  it('a status write that conflicts (the cache was behind) fails the pass for the queue to back off, with no Event or failure condition', async () => {
    const e = echo('hello', 'hi');
    const s = setup(e);
    s.jobs.add({ ...desiredJob(e, 'busybox'), metadata: { ...desiredJob(e, 'busybox').metadata, uid: 'job-uid' } });
    s.api.failNext = {
      method: 'PATCH',
      err: new ApiError(409, 'Conflict', 'Operation cannot be fulfilled on echos.mmontes.io "hello": the object has been modified'),
    };
    await assert.rejects(
      s.reconciler.reconcile('ns/hello', s.ctx),
      (err: ApiError) => err.code === 409,
      'a conflict is an error: the queue backs off',
    );
    assert.deepEqual(s.events, [], 'no ReconcileFailed Event');
    assert.deepEqual(s.api.writes, [], 'no failure condition written');
    s.api.failNext = { method: 'PATCH', err: new ApiError(429, 'TooManyRequests', 'slow down') };
    await assert.rejects(s.reconciler.reconcile('ns/hello', s.ctx), (err: ApiError) => err.code === 429);
    assert.deepEqual(s.events, [], 'no ReconcileFailed Event for a 429');
    assert.deepEqual(s.api.writes, [], 'no failure condition written for a 429');
    s.api.failNext = { method: 'PATCH', err: new ApiError(500, 'InternalError', 'boom') };
    await assert.rejects(s.reconciler.reconcile('ns/hello', s.ctx), /boom/, 'other errors fail the reconcile too');
    assert.deepEqual(s.events, ['ReconcileFailed'], 'and are reported');
  });

  it('the pass after our own writes acts on what we wrote, not the older cached Echo: no 409, nothing to write', async () => {
    const e = echo('hello', 'hi');
    const s = setup(e, true);
    await s.reconciler.reconcile('ns/hello', s.ctx);
    assert.deepEqual(
      s.api.writes.map((w) => w.method),
      ['PATCH', 'POST'],
    );
    // The Job's ADD event wakes the Echo again; the Echos watch has not delivered our write yet.
    s.jobs.add({ ...s.api.writes[1]!.body, metadata: { ...s.api.writes[1]!.body.metadata, uid: 'job-uid' } });
    assert.equal(s.echos.get('ns/hello')!.metadata.resourceVersion, '1', 'the cache is behind');
    await s.reconciler.reconcile('ns/hello', s.ctx);
    assert.deepEqual(
      s.api.writes.map((w) => w.method),
      ['PATCH', 'POST'],
      'no second (conflicting) status write',
    );
  });

  it('deletes no previous run while the server has a newer spec than the cache (a lagging Echos cache)', async () => {
    const e = echo('hello', 'old');
    const s = setup(e);
    // The Job of the current message, made by the previous leader; this cache still has the old one.
    const current = echo('hello', 'new', { generation: 2, resourceVersion: '9' });
    s.jobs.add({ ...desiredJob(current, 'busybox'), metadata: { ...desiredJob(current, 'busybox').metadata, uid: 'current-job' } });
    s.api.existing.set('/apis/mmontes.io/v1alpha1/namespaces/ns/echos/hello', current as any);
    await s.reconciler.reconcile('ns/hello', s.ctx);
    assert.deepEqual(s.api.writes, [], 'no DELETE, no claim, no Job');
    s.api.existing.delete('/apis/mmontes.io/v1alpha1/namespaces/ns/echos/hello');
    await s.reconciler.reconcile('ns/hello', s.ctx);
    assert.deepEqual(s.api.writes, [], 'nor when the Echo is gone');
  });

  it('a run whose Job create keeps being refused keeps Reconciled=False: the claim does not flip it back', async () => {
    const e = echo('hello', 'hi');
    const s = setup(e);
    const quota = new ApiError(
      403,
      'Forbidden',
      'jobs.batch "x" is forbidden: exceeded quota: none, requested: count/jobs.batch=1, used: count/jobs.batch=0, limited: count/jobs.batch=0',
    );
    s.api.failNext = { method: 'POST', err: quota };
    await assert.rejects(s.reconciler.reconcile('ns/hello', s.ctx), /exceeded quota/);
    const path = '/apis/mmontes.io/v1alpha1/namespaces/ns/echos/hello';
    const afterFirst = s.api.existing.get(path);
    assert.equal(afterFirst.status.conditions.find((c: any) => c.type === 'Reconciled').status, 'False');
    // The next pass sees what the server has (the cache caught up) and is refused again.
    s.echos.add(afterFirst);
    const writesBefore = s.api.writes.length;
    s.api.failNext = { method: 'POST', err: quota };
    await assert.rejects(s.reconciler.reconcile('ns/hello', s.ctx), /exceeded quota/);
    const statusWrites = s.api.writes.slice(writesBefore).filter((w) => w.method === 'PATCH');
    assert.deepEqual(statusWrites, [], 'no status write: the condition already says why');
    assert.equal(s.api.existing.get(path).status.conditions.find((c: any) => c.type === 'Reconciled').status, 'False');
  });

  it('starts no run when the server says the cache is behind: Echo gone, re-created, deleting, newer, or run finished', async () => {
    const e = echo('hello', 'hi');
    const path = '/apis/mmontes.io/v1alpha1/namespaces/ns/echos/hello';
    const server: [string, Echo | undefined][] = [
      ['gone', undefined],
      ['re-created', echo('hello', 'hi', { uid: 'another', resourceVersion: '7' })],
      ['deleting', echo('hello', 'hi', { deletionTimestamp: '2026-01-01T00:00:00Z', resourceVersion: '7' })],
      ['newer spec', { ...echo('hello', 'bye', { generation: 2, resourceVersion: '7' }) }],
      ['finished', { ...e, metadata: { ...e.metadata, resourceVersion: '7' }, status: { phase: 'Succeeded', jobName: jobNameFor(e) } }],
    ];
    // The cache holds a plain new Echo (the claim is a write), or one whose status already names
    // the run, as a pass that claimed it and failed to create the Job left it (a GET confirms).
    for (const cached of [e, claimed(e)]) {
      for (const [what, live] of server) {
        const s = setup(cached);
        if (live) s.api.existing.set(path, live as any);
        else s.api.existing.delete(path);
        const outcome = await s.reconciler.reconcile('ns/hello', s.ctx).catch((err: ApiError) => err.code);
        assert.deepEqual(s.api.writes, [], `${what}${cached.status ? ' (claimed before)' : ''}: no Job, no status`);
        if (cached === e && what !== 'gone') assert.equal(outcome, 409, `${what}: a conflict, retried with backoff`);
      }
      const ok = setup(cached);
      await ok.reconciler.reconcile('ns/hello', ok.ctx);
      assert.deepEqual(
        ok.api.writes.map((w) => w.method),
        cached.status ? ['POST'] : ['PATCH', 'POST'],
        'in step: the run starts',
      );
    }
  });
});

describe('containsDesired', () => {
  it('ignores fields the server added and notices fields that differ', () => {
    assert.ok(containsDesired({ a: 1, b: { c: [1, { d: 2 }] } }, { a: 1, x: 9, b: { c: [1, { d: 2, e: 3 }] } }));
    assert.ok(!containsDesired({ a: 1 }, { a: 2 }));
    assert.ok(!containsDesired({ c: [1, 2] }, { c: [1] }));
    assert.ok(!containsDesired({ a: { b: 1 } }, {}));
  });
});
