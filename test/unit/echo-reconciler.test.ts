/**
 * The Echo reconciler against the runtime's fake client and caches (src/runtime/testing): what it
 * creates, what it writes when the cluster already matches (nothing), how it meets a cache that
 * lags, a conflict, a same-named Job it does not control, and refusals only a change can cure.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { ECHOS, type Echo, type EchoStatus } from '../../src/api/echo.js';
import { derivedName, nameWithin, shortHash } from '../../src/controllers/common/naming.js';
import { desiredJob, jobNameFor } from '../../src/controllers/echo/desired.js';
import { EchoReconciler } from '../../src/controllers/echo/reconciler.js';
import { echoStatus, reconciledOk, runState } from '../../src/controllers/echo/status.js';
import { ApiError } from '../../src/kube/errors.js';
import type { PatchOptions } from '../../src/runtime/client/index.js';
import { JOBS } from '../../src/kube/resources.js';
import { isTerminalError, terminalErrorIn } from '../../src/runtime/controller/terminal.js';
import { nopLogger } from '../../src/runtime/log.js';
import { containsDesired } from '../../src/runtime/reconcile/compare.js';
import { findCondition } from '../../src/runtime/reconcile/conditions.js';
import { FakeCache, FakeClient, FakeEventRecorder, refusal, type FakeRequest } from '../../src/runtime/testing/index.js';

function echo(name: string, message: string, extra: Partial<Echo['metadata']> = {}): Echo {
  return {
    apiVersion: 'mmontes.io/v1alpha1',
    kind: 'Echo',
    metadata: { name, namespace: 'ns', uid: `uid-${name}`, generation: 1, resourceVersion: '1', ...extra },
    spec: { message },
  };
}

/** `e` with the status a pass writes before it creates the Job. */
function claimed(e: Echo): Echo {
  return { ...e, status: echoStatus(e, jobNameFor(e), undefined, reconciledOk, () => new Date('2025-12-31T00:00:00Z')) };
}

/** The Job of `e`'s message as the server would hold it. */
function jobOf(e: Echo, uid: string): V1Job {
  const job = desiredJob(e, 'busybox');
  return { ...job, metadata: { ...job.metadata, uid } };
}

/** A Job of that name that no Echo controls. */
function foreignJob(name: string): V1Job {
  return { apiVersion: 'batch/v1', kind: 'Job', metadata: { name, namespace: 'ns', uid: 'foreign', ownerReferences: [] } };
}

const statusOf = (w: FakeRequest | undefined): EchoStatus => (w?.body as { status: EchoStatus }).status;
const condition = (obj: Echo | undefined, type: string) => findCondition(obj?.status?.conditions, type);

/** An Echo on the server and in the cache, its reconciler, and what the informers would deliver. */
function setup(e: Echo, options: { readYourWrites?: boolean; stalledRecheckMs?: number } = {}) {
  const client = new FakeClient();
  client.add(ECHOS, e);
  const echos = new FakeCache<Echo>({ readYourWrites: options.readYourWrites }).add(e);
  const jobs = new FakeCache<V1Job>();
  const events = new FakeEventRecorder();
  const reconciler = new EchoReconciler({
    echos,
    jobs,
    client,
    events,
    jobImage: 'busybox',
    now: () => new Date('2026-01-01T00:00:00Z'),
    stalledRecheckMs: options.stalledRecheckMs,
  });
  const ctx = { log: nopLogger, signal: new AbortController().signal, reconcileID: 'r' };
  return {
    client,
    echos,
    jobs,
    events,
    /** One reconcile of ns/<name>: its error, or undefined. */
    pass: () =>
      reconciler.reconcile(`ns/${e.metadata.name}`, ctx).then(
        () => undefined,
        (err: unknown) => err,
      ),
    /** The verbs of the writes since `from`. */
    verbs: (from = 0) => client.writes.slice(from).map((w) => w.verb),
    /** The server's Echo. */
    server: () => client.stored(ECHOS, `ns/${e.metadata.name}`),
    /** The informers deliver what the server now holds. */
    caughtUp: () => {
      echos.syncFrom(client, ECHOS);
      jobs.syncFrom(client, JOBS);
    },
  };
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

  it('runs the message literally, without a shell, its $ doubled against the kubelet expansion', () => {
    const job = desiredJob(echo('x', '$(id) "; rm -rf / `x`'), 'busybox');
    const c = job.spec!.template.spec!.containers[0]!;
    assert.deepEqual(c.command, ['printf', '%s\\n', '$$(id) "; rm -rf / `x`']);
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
    assert.equal(await s.pass(), undefined);
    // The status the run starts with goes first: written conditionally, it confirms the cache.
    assert.deepEqual(s.verbs(), ['patchStatus', 'create'], 'no status write after the create: it would be the same');
    const [claim, create] = s.client.writes;
    assert.equal((claim!.options as PatchOptions).resourceVersion, '1', 'conditional on the cached resourceVersion');
    assert.equal(statusOf(claim).jobName, (create!.body as V1Job).metadata!.name);
    assert.equal(statusOf(claim).phase, 'Pending');
    s.caughtUp();
    const writes = s.client.writes.length;
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(writes), [], 'a second pass over the same state writes nothing');
    assert.deepEqual(
      s.events.events.map((e) => e.reason),
      ['JobCreated'],
    );
  });

  it('adopts its own Job when the cache lags (AlreadyExists), and refuses a foreign one', async () => {
    const e = echo('hello', 'hi');
    const s = setup(e);
    s.client.add(JOBS, jobOf(e, 'job-uid'));
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(), ['patchStatus'], 'no second create, only status');

    const t = setup(e);
    t.client.add(JOBS, foreignJob(jobNameFor(e)));
    const err = await t.pass();
    assert.ok(isTerminalError(err) && /not controlled by this Echo/.test((err as Error).message));
    const failure = t.client.writes.filter((w) => w.verb === 'patchStatus').at(-1);
    assert.equal(
      findCondition(statusOf(failure).conditions, 'Reconciled')?.status,
      'False',
      'written over our own status write of this pass',
    );
    assert.deepEqual(
      t.events.events.map((ev) => ev.reason),
      ['NameTaken'],
    );
    assert.equal(t.client.stored(JOBS, `ns/${jobNameFor(e)}`)?.metadata?.uid, 'foreign', 'the foreign Job is left alone');
  });

  it("takes no Job as the Echo's run unless its controller reference names the Echo's kind and UID in the Echo's namespace", async () => {
    const e = echo('hello', 'hi');
    const s = setup(e);
    const succeeded = { conditions: [{ type: 'Complete', status: 'True' }], succeeded: 1 };
    // Planted by a tenant of another namespace who read the Echo's UID: the current run's name
    // (a spoofed success) and a "previous run" the operator would delete, with an Event on the Echo.
    const planted = { ...jobOf(e, 'planted-current'), status: succeeded };
    planted.metadata = { ...planted.metadata, namespace: 'tenant-a' };
    const previous = jobOf(e, 'planted-previous');
    previous.metadata = { ...previous.metadata, namespace: 'tenant-a', name: 'echo-hello-previous' };
    // In the Echo's namespace, the UID under another kind.
    const otherKind = jobOf(e, 'other-kind');
    otherKind.metadata = {
      ...otherKind.metadata,
      name: 'other-kind',
      ownerReferences: otherKind.metadata!.ownerReferences!.map((ref) => ({ ...ref, kind: 'ScheduledEcho' })),
    };
    for (const job of [planted, previous, otherKind]) s.client.add(JOBS, job);
    s.caughtUp();
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(), ['patchStatus', 'create'], 'its own Job is created; nothing is deleted');
    assert.equal((s.client.writes[1]!.body as V1Job).metadata!.namespace, 'ns');
    assert.equal(statusOf(s.client.writes[0]).phase, 'Pending', 'no status from the planted Job');
    assert.deepEqual(
      s.events.events.map((ev) => ev.reason),
      ['JobCreated'],
    );
    for (const key of ['tenant-a/' + jobNameFor(e), 'tenant-a/echo-hello-previous', 'ns/other-kind'])
      assert.ok(s.client.stored(JOBS, key), `${key} is left alone`);
  });

  it('does not run a finished Echo again when its Job is gone, and replaces the Job of an old message', async () => {
    const e = echo('hello', 'hi');
    const done: Echo = { ...e, status: { phase: 'Succeeded', jobName: jobNameFor(e) } };
    const s = setup(done);
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(), []);

    const edited: Echo = { ...done, spec: { message: 'new' }, metadata: { ...done.metadata, generation: 2 } };
    const u = setup(edited);
    u.client.add(JOBS, jobOf(e, 'old-job'));
    u.caughtUp();
    assert.equal(await u.pass(), undefined);
    assert.deepEqual(u.verbs(), ['delete', 'patchStatus', 'create']);
    assert.deepEqual(u.client.writes[0]!.body, { uid: 'old-job' }, 'the uid precondition');
    assert.equal((u.client.writes[2]!.body as V1Job).metadata!.name, jobNameFor(edited));
    assert.equal(u.client.stored(JOBS, `ns/${jobNameFor(e)}`), undefined, 'the old Job is gone');
  });

  it('a Job removed before its outcome was recorded: its run is not repeated, status says Failed (JobRemoved)', async () => {
    const e = echo('hello', 'hi');
    const s = setup(e);
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(), ['patchStatus', 'create']);
    // The Job finishes and a TTL (or a person) removes it before any watch event reached us.
    s.client.remove(JOBS, `ns/${jobNameFor(e)}`);
    s.caughtUp();
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(2), ['patchStatus'], 'no second create');
    assert.equal(s.server()?.status?.phase, 'Failed');
    assert.equal(condition(s.server(), 'Succeeded')?.reason, 'JobRemoved');
    assert.deepEqual(s.events.lines().filter((l) => l.includes('JobRemoved')).length, 1);
    s.caughtUp();
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(3), [], 'a finished run: nothing more');
  });

  it('a message edited back to an earlier one runs again: the memory of started runs is per generation', async () => {
    const e = echo('hello', 'hi');
    const s = setup(e);
    assert.equal(await s.pass(), undefined);
    const edit = (message: string, generation: number): void => {
      const server = s.server()!;
      s.client.add(ECHOS, { ...server, spec: { message }, metadata: { ...server.metadata, generation } });
      s.caughtUp();
    };
    edit('new', 2);
    assert.equal(await s.pass(), undefined);
    edit('hi', 3);
    const from = s.client.writes.length;
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(from), ['delete', 'patchStatus', 'create'], "the second message's Job deleted, the first message's made anew");
    assert.notEqual(s.server()?.status?.phase, 'Failed');
  });

  it('after a restart, a status that saw the run start keeps it from repeating; a Job only not cached yet is used', async () => {
    const e = echo('hello', 'hi');
    const running: Echo = { ...e, status: { phase: 'Running', jobName: jobNameFor(e), observedGeneration: 1 } };
    const s = setup(running);
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(), ['patchStatus'], 'no create: the Job is gone from the server');
    assert.equal(condition(s.server(), 'Succeeded')?.reason, 'JobRemoved');

    const u = setup(running);
    u.client.add(JOBS, jobOf(e, 'job-uid'));
    assert.equal(await u.pass(), undefined);
    assert.ok(!u.verbs().includes('create'), 'the server has the Job: no create');
    assert.notEqual(u.server()?.status?.phase, 'Failed');

    // Pending names the Job before its create, too: without this process's memory, a missing Job is created.
    const p = setup(claimed(e));
    assert.equal(await p.pass(), undefined);
    assert.ok(p.verbs().includes('create'));
  });

  it('a status write that conflicts (the cache was behind) fails the pass for the queue to back off, with no Event or failure condition', async () => {
    const e = echo('hello', 'hi');
    const s = setup(e);
    s.jobs.add(s.client.add(JOBS, jobOf(e, 'job-uid')));
    s.client.add(ECHOS, { ...e, metadata: { ...e.metadata, resourceVersion: '2' } });
    const conflict = await s.pass();
    assert.ok(conflict instanceof ApiError && conflict.code === 409, 'a conflict is an error: the queue backs off');
    assert.deepEqual(s.events.lines(), [], 'no ReconcileFailed Event');
    assert.deepEqual(s.verbs(), [], 'no failure condition written');
    s.caughtUp();
    s.client.failNext('patchStatus', refusal(429, 'TooManyRequests', 'slow down'));
    assert.equal(((await s.pass()) as ApiError).code, 429);
    assert.deepEqual(s.events.lines(), [], 'no ReconcileFailed Event for a 429');
    assert.deepEqual(s.verbs(), [], 'no failure condition written for a 429');
    s.client.failNext('patchStatus', refusal(500, 'InternalError', 'boom'));
    assert.match(String(await s.pass()), /boom/, 'other errors fail the reconcile too');
    assert.deepEqual(
      s.events.events.map((ev) => ev.reason),
      ['ReconcileFailed'],
      'and are reported',
    );
  });

  it('the pass after our own writes acts on what we wrote, not the older cached Echo: no 409, nothing to write', async () => {
    for (const readYourWrites of [true, false]) {
      const s = setup(echo('hello', 'hi'), { readYourWrites });
      assert.equal(await s.pass(), undefined);
      // The Job's ADD event wakes the Echo again; the Echos watch has not delivered our write yet.
      s.jobs.syncFrom(s.client, JOBS);
      const outcome = await s.pass();
      if (readYourWrites) {
        assert.equal(outcome, undefined);
        assert.deepEqual(s.verbs(), ['patchStatus', 'create'], 'no second (conflicting) status write');
      } else {
        assert.equal((outcome as ApiError).code, 409, 'without read-your-writes, the stale copy conflicts');
      }
    }
  });

  it('deletes no previous run while the server has a newer spec than the cache (a lagging Echos cache)', async () => {
    const s = setup(echo('hello', 'old'));
    // The Job of the current message, made by the previous leader; this cache still has the old one.
    const current = echo('hello', 'new', { generation: 2, resourceVersion: '9' });
    s.jobs.add(jobOf(current, 'current-job'));
    s.client.add(ECHOS, current);
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(), [], 'no DELETE, no claim, no Job');
    s.client.remove(ECHOS, 'ns/hello');
    assert.equal(await s.pass(), undefined);
    assert.deepEqual(s.verbs(), [], 'nor when the Echo is gone');
  });

  it('a run whose Job create keeps being refused keeps Reconciled=False: the claim does not flip it back', async () => {
    const s = setup(echo('hello', 'hi'));
    const quota = refusal(
      403,
      'Forbidden',
      'jobs.batch "x" is forbidden: exceeded quota: none, requested: count/jobs.batch=1, used: count/jobs.batch=0, limited: count/jobs.batch=0',
    );
    s.client.failNext('create', quota);
    assert.match(String(await s.pass()), /exceeded quota/);
    assert.equal(condition(s.server(), 'Reconciled')?.status, 'False');
    // The next pass sees what the server has (the cache caught up) and is refused again.
    s.caughtUp();
    const writes = s.client.writes.length;
    s.client.failNext('create', quota);
    assert.match(String(await s.pass()), /exceeded quota/);
    assert.deepEqual(s.verbs(writes), [], 'no status write: the condition already says why');
    assert.equal(condition(s.server(), 'Reconciled')?.status, 'False');
  });

  it('starts no run when the server says the cache is behind: Echo gone, re-created, deleting, newer, or run finished', async () => {
    const e = echo('hello', 'hi');
    const server: [string, Echo | undefined][] = [
      ['gone', undefined],
      ['re-created', echo('hello', 'hi', { uid: 'another', resourceVersion: '7' })],
      ['deleting', echo('hello', 'hi', { deletionTimestamp: '2026-01-01T00:00:00Z', resourceVersion: '7' })],
      ['newer spec', echo('hello', 'bye', { generation: 2, resourceVersion: '7' })],
      ['finished', { ...e, metadata: { ...e.metadata, resourceVersion: '7' }, status: { phase: 'Succeeded', jobName: jobNameFor(e) } }],
    ];
    // The cache holds a plain new Echo (the claim is a write), or one whose status already names
    // the run, as a pass that claimed it and failed to create the Job left it (a GET confirms).
    for (const cached of [e, claimed(e)]) {
      for (const [what, live] of server) {
        const s = setup(cached);
        if (live) s.client.add(ECHOS, live);
        else s.client.remove(ECHOS, 'ns/hello');
        const outcome = await s.pass();
        assert.deepEqual(s.verbs(), [], `${what}${cached.status ? ' (claimed before)' : ''}: no Job, no status`);
        if (cached === e && what !== 'gone') assert.equal((outcome as ApiError).code, 409, `${what}: a conflict, retried with backoff`);
      }
      const ok = setup(cached);
      assert.equal(await ok.pass(), undefined);
      assert.deepEqual(ok.verbs(), cached.status ? ['create'] : ['patchStatus', 'create'], 'in step: the run starts');
    }
  });
});

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
    s.client.failNext('create', invalidJob(jobNameFor(e)));
    const err = await s.pass();
    assert.ok(isTerminalError(err), 'a TerminalError: the controller does not retry it');
    assert.equal(terminalErrorIn(err)!.recheckAfterMs, undefined, 'only a new generation wakes it (the watch)');
    const stalled = s.server()!;
    const serverMessage = 'Job.batch "' + jobNameFor(e) + '" is invalid: spec.template.spec.containers[0].image: Required value';
    assert.equal(stalled.status?.observedGeneration, 1, 'the generation looked at');
    assert.deepEqual(
      ['Ready', 'Stalled', 'Reconciled', 'Reconciling'].map((t) => [t, condition(stalled, t)?.status, condition(stalled, t)?.reason]),
      [
        ['Ready', 'False', 'Invalid'],
        ['Stalled', 'True', 'Invalid'],
        ['Reconciled', 'False', 'Invalid'],
        ['Reconciling', undefined, undefined],
      ],
    );
    assert.equal(condition(stalled, 'Stalled')?.message, serverMessage, "the server's own message");
    assert.deepEqual(s.events.lines(), [`Warning Invalid ${serverMessage}`], 'one Warning Event');

    // Looked at again (a resync, a restart): the same refusal, nothing written, no Event.
    s.caughtUp();
    const writes = s.client.writes.length;
    s.client.failNext('create', invalidJob(jobNameFor(e)));
    assert.ok(isTerminalError(await s.pass()), 'a TerminalError');
    assert.deepEqual(s.verbs(writes), [], 'no write');
    assert.equal(s.events.events.length, 1, 'no second Event');

    // A new spec (generation 2) is accepted: the run starts, Stalled goes.
    const fixed: Echo = { ...stalled, spec: { message: 'fixed' }, metadata: { ...stalled.metadata, generation: 2 } };
    s.client.add(ECHOS, fixed);
    s.caughtUp();
    assert.equal(await s.pass(), undefined);
    const now = s.server()!;
    assert.equal(now.status?.observedGeneration, 2);
    assert.equal(condition(now, 'Stalled'), undefined, 'Stalled removed');
    assert.equal(condition(now, 'Reconciling')?.status, 'True');
    assert.equal(condition(now, 'Reconciled')?.status, 'True');
    assert.ok(s.client.stored(JOBS, `ns/${jobNameFor(fixed)}`), 'the Job created');
  });

  it('a Job name taken by a Job it does not control: NameTaken stall, rechecked; the recheck writes nothing while it holds; gone, the run starts', async () => {
    const e = echo('hello', 'hi');
    const s = setup(e, { stalledRecheckMs: 1234 });
    s.client.add(JOBS, foreignJob(jobNameFor(e)));
    const err = await s.pass();
    assert.equal(terminalErrorIn(err)?.recheckAfterMs, 1234, 'terminal, with a recheck: the foreign Job is not watched');
    const stalled = s.server()!;
    assert.equal(condition(stalled, 'Stalled')?.reason, 'NameTaken');
    assert.match(condition(stalled, 'Stalled')?.message ?? '', /already exists and is not controlled by this Echo/);
    assert.equal(stalled.status?.observedGeneration, 1);
    assert.deepEqual(
      s.events.events.map((ev) => ev.reason),
      ['NameTaken'],
    );

    s.echos.syncFrom(s.client, ECHOS);
    const writes = s.client.writes.length;
    assert.ok(isTerminalError(await s.pass()), 'a TerminalError');
    assert.deepEqual(s.verbs(writes), [], 'the recheck writes nothing');
    assert.deepEqual(
      s.events.events.map((ev) => ev.reason),
      ['NameTaken'],
      'and records no Event',
    );

    s.client.remove(JOBS, `ns/${jobNameFor(e)}`);
    assert.equal(await s.pass(), undefined);
    const ready = s.server()!;
    assert.equal(condition(ready, 'Stalled'), undefined, 'Stalled removed');
    assert.equal(condition(ready, 'Reconciled')?.status, 'True');
    assert.deepEqual(
      s.events.events.map((ev) => ev.reason),
      ['NameTaken', 'JobCreated'],
    );
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
    for (const refused of refusals) {
      const s = setup(echo('hello', 'hi'));
      s.client.failNext('create', refused);
      const err = await s.pass();
      assert.equal(err, refused, `${refused.code} ${refused.reason}: rethrown as it is`);
      assert.ok(!isTerminalError(err));
      assert.equal(condition(s.server(), 'Stalled'), undefined, `${refused.code}: not Stalled`);
      assert.equal(condition(s.server(), 'Reconciled')?.status, 'False');
      assert.deepEqual(
        s.events.events.map((ev) => ev.reason),
        ['ReconcileFailed'],
      );
    }
  });

  it("a 400 BadRequest that is the server's own (it could not accept the request) stalls", async () => {
    const s = setup(echo('hello', 'hi'));
    const message = 'Job in version "v1" cannot be handled as a Job: json: cannot unmarshal string';
    s.client.failNext(
      'create',
      new ApiError(400, 'BadRequest', `POST /apis/batch/v1/namespaces/ns/jobs: ${message}`, {
        kind: 'Status',
        code: 400,
        reason: 'BadRequest',
        message,
      }),
    );
    assert.ok(isTerminalError(await s.pass()), 'a TerminalError');
    assert.equal(condition(s.server(), 'Stalled')?.message, message);
    assert.deepEqual(
      s.events.events.map((ev) => ev.reason),
      ['BadRequest'],
    );
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
