import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import { containsDesired } from '../../src/runtime/reconcile/compare.js';
import { derivedName, nameWithin, shortHash } from '../../src/controllers/common/naming.js';
import { desiredJob, jobNameFor } from '../../src/controllers/echo/desired.js';
import { EchoReconciler } from '../../src/controllers/echo/reconciler.js';
import { echoStatus, reconciledOk, runState } from '../../src/controllers/echo/status.js';
import { ApiError } from '../../src/kube/errors.js';
import { isTerminalError, terminalErrorIn } from '../../src/runtime/controller/terminal.js';
import { nopLogger } from '../../src/runtime/log.js';
import { KubeClient } from '../../src/runtime/client/index.js';
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

function setup(e: Echo, readYourWrites = false, options: { stalledRecheckMs?: number } = {}) {
  const echos = new Store<Echo & { metadata: any }>();
  echos.add(e);
  const ryw = new ReadYourWrites<any>(echos, { addEventHandler: () => undefined });
  const echoCache = readYourWrites ? { get: (k: string) => ryw.get(k), byIndex: () => [], wrote: (o: any) => ryw.wrote(o) } : echos;
  const jobs = new Store<V1Job & { metadata: any }>();
  const api = new FakeApi();
  // What the server holds: the same Echo as the cache (a test may make them differ).
  api.existing.set(`/apis/mmontes.io/v1alpha1/namespaces/ns/echos/${e.metadata.name}`, e as any);
  const events: string[] = [];
  const eventLines: string[] = [];
  const reconciler = new EchoReconciler({
    echos: echoCache,
    jobs: jobs,
    client: new KubeClient(api),
    events: {
      recordEvent: (_o, type, reason, message) => {
        events.push(reason);
        eventLines.push(`${type} ${reason} ${message}`);
      },
    },
    jobImage: 'busybox',
    now: () => new Date('2026-01-01T00:00:00Z'),
    ...options,
  });
  const ctx = { log: nopLogger, signal: new AbortController().signal, reconcileID: 'r' };
  return { echos, jobs, api, events, eventLines, reconciler, ctx };
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
    await assert.rejects(
      t.reconciler.reconcile('ns/hello', t.ctx),
      (err: Error) => isTerminalError(err) && /not controlled by this Echo/.test(err.message),
    );
    const failure = t.api.writes.filter((w) => w.path.endsWith('/status')).at(-1);
    assert.equal(
      failure?.body.status.conditions.find((c: any) => c.type === 'Reconciled').status,
      'False',
      'written over our own status write of this pass',
    );
    assert.deepEqual(t.events, ['NameTaken']);
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

const ECHO_PATH = '/apis/mmontes.io/v1alpha1/namespaces/ns/echos/hello';
const condition = (obj: any, type: string) => obj.status?.conditions?.find((c: any) => c.type === type);

/** What the API server answers when its validation of the Job refuses a field. */
function invalidJob(name: string): ApiError {
  const message = `Job.batch "${name}" is invalid: spec.template.spec.containers[0].image: Required value`;
  return new ApiError(422, 'Invalid', `POST /apis/batch/v1/namespaces/ns/jobs: ${message}`, {
    kind: 'Status',
    status: 'Failure',
    message,
    reason: 'Invalid',
    code: 422,
    details: { causes: [{ field: 'spec.template.spec.containers[0].image', message: 'Required value' }] },
  });
}

describe('EchoReconciler: refusals only a change can cure stall the Echo', () => {
  it('a Job the server finds Invalid: Stalled=True with its message, observedGeneration, one Event, no retry; the same again writes nothing', async () => {
    const e = echo('hello', 'hi');
    const s = setup(e);
    s.api.failNext = { method: 'POST', err: invalidJob(jobNameFor(e)) };
    const err = await s.reconciler.reconcile('ns/hello', s.ctx).catch((x: unknown) => x);
    assert.ok(isTerminalError(err), 'a TerminalError: the controller does not retry it');
    assert.equal(terminalErrorIn(err)!.recheckAfterMs, undefined, 'only a new generation wakes it (the watch)');
    const stalled = s.api.existing.get(ECHO_PATH);
    const serverMessage = 'Job.batch "' + jobNameFor(e) + '" is invalid: spec.template.spec.containers[0].image: Required value';
    assert.equal(stalled.status.observedGeneration, 1, 'the generation looked at');
    assert.deepEqual(
      ['Ready', 'Stalled', 'Reconciled', 'Reconciling'].map((t) => [t, condition(stalled, t)?.status, condition(stalled, t)?.reason]),
      [
        ['Ready', 'False', 'Invalid'],
        ['Stalled', 'True', 'Invalid'],
        ['Reconciled', 'False', 'Invalid'],
        ['Reconciling', undefined, undefined],
      ],
    );
    assert.equal(condition(stalled, 'Stalled').message, serverMessage, "the server's own message");
    assert.deepEqual(s.eventLines, [`Warning Invalid ${serverMessage}`], 'one Warning Event');

    // Looked at again (a resync, a restart): the same refusal, nothing written, no Event.
    s.echos.add(stalled);
    const writes = s.api.writes.length;
    s.api.failNext = { method: 'POST', err: invalidJob(jobNameFor(e)) };
    assert.ok(isTerminalError(await s.reconciler.reconcile('ns/hello', s.ctx).catch((x: unknown) => x)), 'a TerminalError');
    assert.deepEqual(s.api.writes.slice(writes), [], 'no write');
    assert.equal(s.eventLines.length, 1, 'no second Event');

    // A new spec (generation 2) is accepted: the run starts, Stalled goes.
    const fixed = { ...stalled, spec: { message: 'fixed' }, metadata: { ...stalled.metadata, generation: 2 } };
    s.api.existing.set(ECHO_PATH, fixed);
    s.echos.add(fixed);
    await s.reconciler.reconcile('ns/hello', s.ctx);
    const now = s.api.existing.get(ECHO_PATH);
    assert.equal(now.status.observedGeneration, 2);
    assert.equal(condition(now, 'Stalled'), undefined, 'Stalled removed');
    assert.equal(condition(now, 'Reconciling')?.status, 'True');
    assert.equal(condition(now, 'Reconciled')?.status, 'True');
    assert.ok(
      s.api.writes.some((w) => w.method === 'POST' && w.body.metadata.name === jobNameFor(fixed)),
      'the Job created',
    );
  });

  it('a Job name taken by a Job it does not control: NameTaken stall, rechecked; the recheck writes nothing while it holds; gone, the run starts', async () => {
    const e = echo('hello', 'hi');
    const s = setup(e, false, { stalledRecheckMs: 1234 });
    const jobPath = `/apis/batch/v1/namespaces/ns/jobs/${jobNameFor(e)}`;
    s.api.existing.set(jobPath, { metadata: { name: jobNameFor(e), ownerReferences: [] } });
    const exists = () => ({ method: 'POST', err: new ApiError(409, 'AlreadyExists', 'exists') });
    s.api.failNext = exists();
    const err = await s.reconciler.reconcile('ns/hello', s.ctx).catch((x: unknown) => x);
    assert.equal(terminalErrorIn(err)?.recheckAfterMs, 1234, 'terminal, with a recheck: the foreign Job is not watched');
    const stalled = s.api.existing.get(ECHO_PATH);
    assert.equal(condition(stalled, 'Stalled')?.reason, 'NameTaken');
    assert.match(condition(stalled, 'Stalled')?.message, /already exists and is not controlled by this Echo/);
    assert.equal(stalled.status.observedGeneration, 1);
    assert.deepEqual(s.events, ['NameTaken']);

    s.echos.add(stalled);
    const writes = s.api.writes.length;
    s.api.failNext = exists();
    assert.ok(isTerminalError(await s.reconciler.reconcile('ns/hello', s.ctx).catch((x: unknown) => x)), 'a TerminalError');
    assert.deepEqual(s.api.writes.slice(writes), [], 'the recheck writes nothing');
    assert.deepEqual(s.events, ['NameTaken'], 'and records no Event');

    s.api.existing.delete(jobPath);
    await s.reconciler.reconcile('ns/hello', s.ctx);
    const ready = s.api.existing.get(ECHO_PATH);
    assert.equal(condition(ready, 'Stalled'), undefined, 'Stalled removed');
    assert.equal(condition(ready, 'Reconciled')?.status, 'True');
    assert.deepEqual(s.events, ['NameTaken', 'JobCreated']);
  });

  it('what is not terminal goes back to the queue with backoff: 403, an admission policy (422 naming no field), a webhook 400, 500, transport', async () => {
    const refusals = [
      new ApiError(403, 'Forbidden', 'jobs.batch is forbidden: exceeded quota', { kind: 'Status', code: 403, reason: 'Forbidden' }),
      new ApiError(422, 'Invalid', "ValidatingAdmissionPolicy 'p' denied request", {
        kind: 'Status',
        code: 422,
        reason: 'Invalid',
        message: "jobs.batch \"x\" is forbidden: ValidatingAdmissionPolicy 'p' with binding 'p' denied request: no",
        details: { causes: [{ message: "ValidatingAdmissionPolicy 'p' with binding 'p' denied request: no" }] },
      }),
      new ApiError(400, 'HTTP400', 'admission webhook "w" denied the request', { kind: 'Status', code: 400, message: 'denied' }),
      new ApiError(500, 'InternalError', 'boom', { kind: 'Status', code: 500, reason: 'InternalError' }),
      new ApiError(0, 'TransportError', 'POST /apis/batch/v1/namespaces/ns/jobs: ECONNRESET'),
    ];
    for (const refusal of refusals) {
      const s = setup(echo('hello', 'hi'));
      s.api.failNext = { method: 'POST', err: refusal };
      const err = await s.reconciler.reconcile('ns/hello', s.ctx).catch((x: unknown) => x);
      assert.equal(err, refusal, `${refusal.code} ${refusal.reason}: rethrown as it is`);
      assert.ok(!isTerminalError(err));
      const now = s.api.existing.get(ECHO_PATH);
      assert.equal(condition(now, 'Stalled'), undefined, `${refusal.code}: not Stalled`);
      assert.equal(condition(now, 'Reconciled')?.status, 'False');
      assert.deepEqual(s.events, ['ReconcileFailed']);
    }
  });

  it("a 400 BadRequest that is the server's own (it could not accept the request) stalls", async () => {
    const s = setup(echo('hello', 'hi'));
    const message = 'Job in version "v1" cannot be handled as a Job: json: cannot unmarshal string';
    s.api.failNext = {
      method: 'POST',
      err: new ApiError(400, 'BadRequest', `POST /apis/batch/v1/namespaces/ns/jobs: ${message}`, {
        kind: 'Status',
        code: 400,
        reason: 'BadRequest',
        message,
      }),
    };
    assert.ok(isTerminalError(await s.reconciler.reconcile('ns/hello', s.ctx).catch((x: unknown) => x)), 'a TerminalError');
    assert.equal(condition(s.api.existing.get(ECHO_PATH), 'Stalled')?.message, message);
    assert.deepEqual(s.events, ['BadRequest']);
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
