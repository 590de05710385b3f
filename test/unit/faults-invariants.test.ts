/**
 * The fault campaign's judge on hand-made audit records and final states: every invariant fires
 * on a violating input and stays quiet on a clean one, for the ways each program renders its
 * Jobs (ours, the controller-runtime peer, the Go echoperator).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import type { ScheduledEcho } from '../../src/api/scheduledecho.js';
import { desiredJob } from '../../src/controllers/echo/desired.js';
import { desiredCronJob } from '../../src/controllers/scheduledecho/desired.js';
import { auditOffset, readAudit, readAuditWithObjects, type AuditRecordWithObjects } from '../../scripts/lab/faults/judge/audit.js';
import { judge, type FinalState, type Violation } from '../../scripts/lab/faults/judge/invariants.js';
import { kubeletExpand, renderedMessage } from '../../scripts/lab/faults/judge/pod.js';
import { leaseTerms } from '../../scripts/lab/faults/judge/terms.js';
import { exitAfterLeaseLoss } from '../../scripts/lab/faults/judge/lease-loss.js';

const NS = 'faults-1';
const LEASE = { namespace: NS, name: 'echoperator', durationS: 15 };
const T0 = Date.parse('2026-11-28T00:00:00Z');
const s = (seconds: number): number => T0 + seconds * 1000;

function echo(name: string, uid: string, generation: number, message: string, status?: Echo['status']): Echo {
  return {
    apiVersion: 'mmontes.io/v1alpha1',
    kind: 'Echo',
    metadata: { name, namespace: NS, uid, generation },
    spec: { message },
    ...(status ? { status } : {}),
  };
}

/** Our Job for the Echo (its name, owner and escaped command), complete unless told. */
function jobOf(e: Echo, complete = true): V1Job {
  const job = desiredJob(e, 'busybox:1.37');
  job.metadata!.uid = `job-${job.metadata!.name}`;
  if (complete) job.status = { startTime: new Date(s(1)), conditions: [{ type: 'Complete', status: 'True' }] };
  return job;
}

/** A status that tells the truth about `job`. */
function truthful(e: Echo, job: V1Job): Echo {
  return echo(e.metadata.name!, e.metadata.uid!, e.metadata.generation!, e.spec.message, {
    phase: 'Succeeded',
    jobName: job.metadata!.name,
    observedGeneration: e.metadata.generation,
    conditions: [{ type: 'Ready', status: 'True', reason: 'JobComplete', message: '', lastTransitionTime: '2026-11-28T00:00:01Z' }],
  });
}

function record(r: Partial<AuditRecordWithObjects> & Pick<AuditRecordWithObjects, 'at' | 'verb' | 'resource'>): AuditRecordWithObjects {
  return { done: r.at + 5, code: 200, namespace: NS, userAgent: 'test', ...r };
}

/** A user's write of the Echo, as logged with its answer. */
const echoWrite = (at: number, e: Echo, verb = 'update'): AuditRecordWithObjects =>
  record({ at, verb, resource: 'echos', name: e.metadata.name!, code: verb === 'create' ? 201 : 200, responseObject: e });
const jobCreate = (at: number, job: V1Job, replica = 'r0'): AuditRecordWithObjects =>
  record({ at, verb: 'create', resource: 'jobs', name: job.metadata!.name!, code: 201, replica, requestObject: job });
const leaseWrite = (at: number, replica: string, code = 200): AuditRecordWithObjects =>
  record({ at, verb: 'update', resource: 'leases', name: LEASE.name, code, replica });

const empty: FinalState = { echos: [], jobs: [], scheduledEchos: [], cronJobs: [] };

/** The judge on a program without leader election unless `lease` is given. */
function run(
  records: AuditRecordWithObjects[],
  state: Partial<FinalState>,
  { exits = [], lease }: { exits?: { replica: string; designed: boolean }[]; lease?: typeof LEASE } = {},
): Violation[] {
  return judge({
    trace: { namespace: NS, lease, exits: exits.map((e) => ({ ...e, code: 1, signal: null })) },
    records,
    state: { ...empty, ...state },
  });
}

const kinds = (vs: Violation[]): string[] => vs.map((v) => v.invariant);

describe('readAudit', () => {
  it('reads answered writes with the server times and the replica the proxy impersonated, and only those after the offset', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'faults-audit-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const log = join(dir, 'audit.log');
    assert.equal(auditOffset(log), 0, 'no log yet');
    writeFileSync(log, '{"stage":"ResponseComplete","verb":"create","objectRef":{"resource":"leases","name":"before"}}\n');
    const from = auditOffset(log);
    const line = (o: object): string => `${JSON.stringify(o)}\n`;
    writeFileSync(
      log,
      line({ stage: 'ResponseComplete', verb: 'create', objectRef: { resource: 'leases', name: 'before' } }) +
        line({
          stage: 'ResponseComplete',
          verb: 'patch',
          userAgent: 'echoperator/0.1.0',
          requestReceivedTimestamp: '2026-11-28T00:00:01.250000Z',
          stageTimestamp: '2026-11-28T00:00:01.300500Z',
          objectRef: { resource: 'echos', subresource: 'status', namespace: NS, name: 'e1' },
          responseStatus: { code: 409 },
          impersonatedUser: { username: 'system:serviceaccount:x:y', extra: { replica: ['r1'] } },
        }) +
        line({
          stage: 'ResponseComplete',
          verb: 'create',
          requestReceivedTimestamp: '2026-11-28T00:00:02Z',
          stageTimestamp: '2026-11-28T00:00:02Z',
          objectRef: { resource: 'jobs', namespace: NS, name: 'j' },
          responseStatus: { code: 201 },
          requestObject: { metadata: { name: 'j' } },
        }) +
        '{"stage":"ResponseStarted","verb":"get"}\n{"cut by a rota',
    );
    // The first line is the one before the mark, written again: readAudit starts past it.
    const records = readAudit(log, from);
    assert.deepEqual(records, [
      {
        at: s(1.25),
        done: s(1.3),
        verb: 'patch',
        code: 409,
        resource: 'echos',
        subresource: 'status',
        namespace: NS,
        name: 'e1',
        replica: 'r1',
        userAgent: 'echoperator/0.1.0',
      },
      { at: s(2), done: s(2), verb: 'create', code: 201, resource: 'jobs', namespace: NS, name: 'j', userAgent: '' },
    ]);
    assert.deepEqual(readAuditWithObjects(log, from)[1]!.requestObject, { metadata: { name: 'j' } });
  });
});

describe('the message a Job prints, as the kubelet runs it', () => {
  it('is the same for ours (escaped printf), the peer (printf) and the Go echoperator (echo)', () => {
    const message = 'cost: $$5 and $(HOME) $x $(';
    const ours = jobOf(echo('e', 'u', 1, message)).spec!.template.spec;
    assert.equal(renderedMessage(ours), message);
    assert.equal(renderedMessage({ containers: [{ name: 'c', command: ['printf', '%s\\n', 'plain'] }] }), 'plain');
    assert.equal(renderedMessage({ containers: [{ name: 'c', command: ['echo'], args: ['hi'] }] }), 'hi');
    // Unescaped, a `$$` is printed as `$`: the peer's Job would not print this message.
    assert.notEqual(renderedMessage({ containers: [{ name: 'c', command: ['printf', '%s\\n', message] }] }), message);
  });

  it('expands $(VAR) from the container environment and never matches a value it cannot know', () => {
    assert.equal(
      kubeletExpand('a$(X)b$(Y)', (n) => (n === 'X' ? '1' : undefined)),
      'a1b$(Y)',
    );
    const withService = renderedMessage({ containers: [{ name: 'c', command: ['echo', '$(KUBERNETES_SERVICE_HOST)'] }] });
    assert.notEqual(withService, '$(KUBERNETES_SERVICE_HOST)');
  });
});

describe('one-job-per-generation', () => {
  const a1 = echo('e1', 'u1', 1, 'A');
  const b2 = echo('e1', 'u1', 2, 'B');
  const a3 = echo('e1', 'u1', 3, 'A');

  it('is quiet on one Job per generation, a message returning (A, B, A) included, and a Job created after the next edit', () => {
    const history = [echoWrite(s(0), a1, 'create'), jobCreate(s(1), jobOf(a1)), echoWrite(s(2), b2), jobCreate(s(3), jobOf(b2))];
    const final = { echos: [truthful(a3, jobOf(a3))], jobs: [jobOf(a3)] };
    assert.deepEqual(run([...history, echoWrite(s(4), a3), jobCreate(s(5), jobOf(a3))], final), []);
    // Claimed at generation 1, the user's edit, then the create: it is generation 1's only Job.
    const late = [echoWrite(s(0), a1, 'create'), echoWrite(s(1), b2), jobCreate(s(2), jobOf(a1)), jobCreate(s(3), jobOf(b2))];
    assert.deepEqual(run(late, { echos: [truthful(b2, jobOf(b2))], jobs: [jobOf(b2)] }), []);
  });

  it('fires on a second Job of one generation, whatever its name and its writer', () => {
    const again = jobOf(a1);
    again.metadata!.name = 'e1-other-name';
    const vs = run([echoWrite(s(0), a1, 'create'), jobCreate(s(1), jobOf(a1)), jobCreate(s(9), again, 'r1')], {
      echos: [truthful(a1, jobOf(a1))],
      jobs: [jobOf(a1)],
    });
    assert.deepEqual(kinds(vs), ['one-job-per-generation']);
    assert.match(vs[0]!.detail, /generation 1 .*got 2 Jobs: .* by replica r0; e1-other-name .* by replica r1/);
  });

  it('fires on a deleted Echo whose Job was made twice (neither left in the final state)', () => {
    const deleted = record({ at: s(2), verb: 'delete', resource: 'echos', name: 'e1' });
    const vs = run([echoWrite(s(0), a1, 'create'), jobCreate(s(1), jobOf(a1)), deleted, jobCreate(s(3), jobOf(a1), 'r1')], {});
    assert.deepEqual(kinds(vs), ['one-job-per-generation']);
  });

  it('fires on a Job printing a message its Echo never had before the create', () => {
    const vs = run([echoWrite(s(0), a1, 'create'), jobCreate(s(1), jobOf(b2)), echoWrite(s(2), b2)], {
      echos: [truthful(b2, jobOf(b2))],
      jobs: [jobOf(b2)],
    });
    assert.deepEqual(kinds(vs), ['one-job-per-generation']);
    assert.match(vs[0]!.detail, /prints "B", which no generation of the Echo had/);
  });
});

describe('job-when-done and status-converges', () => {
  const e = echo('e1', 'u1', 2, 'B');
  const job = jobOf(e);

  it('is quiet on one Job printing the current message and a status telling its truth (an older run kept is fine)', () => {
    const older = jobOf(echo('e1', 'u1', 1, 'A'));
    assert.deepEqual(run([], { echos: [truthful(e, job)], jobs: [job, older] }), []);
  });

  it('fires on no Job, or two, printing the current message', () => {
    assert.deepEqual(kinds(run([], { echos: [truthful(e, job)] })), ['job-when-done']);
    const twin = { ...jobOf(e), metadata: { ...jobOf(e).metadata, name: 'twin' } };
    const vs = run([], { echos: [truthful(e, job)], jobs: [job, twin] });
    assert.deepEqual(kinds(vs), ['job-when-done']);
    assert.match(vs[0]!.detail, /has 2 Jobs printing its message/);
  });

  it('fires on a status that names another Job, an older generation, a phase the Job is not in, or writes none (the Go echoperator)', () => {
    const lies: Echo[] = [
      { ...truthful(e, job), status: { ...truthful(e, job).status, jobName: 'e1-old' } },
      { ...truthful(e, job), status: { ...truthful(e, job).status, observedGeneration: 1 } },
      { ...truthful(e, job), status: { ...truthful(e, job).status, phase: 'Running' } },
      echo('e1', 'u1', 2, 'B'),
    ];
    for (const lie of lies) {
      const vs = run([], { echos: [lie], jobs: [job] });
      assert.deepEqual(kinds(vs), ['status-converges'], JSON.stringify(lie.status));
      assert.match(vs[0]!.detail, /the truth: Job e1-\w+ phase Succeeded, generation 2/);
    }
    const running = jobOf(e, false);
    const readyTooSoon = { ...truthful(e, running), status: { ...truthful(e, running).status, phase: 'Pending' as const } };
    assert.deepEqual(
      kinds(run([], { echos: [readyTooSoon], jobs: [running] })),
      ['status-converges'],
      'Ready=True before the Job completed',
    );
  });
});

describe('one-cronjob and cronjob-matches-spec', () => {
  const se: ScheduledEcho = {
    apiVersion: 'mmontes.io/v1alpha1',
    kind: 'ScheduledEcho',
    metadata: { name: 's1', namespace: NS, uid: 'su1', generation: 3 },
    spec: { message: 'tick', schedule: '*/5 * * * *' },
    status: { cronJobName: 's1', observedGeneration: 3, conditions: [] },
  };
  const cronJob = (): V1CronJob => desiredCronJob(se, 'busybox:1.37');

  it('is quiet on one matching CronJob (Etc/UTC for an unset zone) and a status naming it', () => {
    assert.deepEqual(run([], { scheduledEchos: [se], cronJobs: [cronJob()] }), []);
    const goStyle = cronJob();
    goStyle.spec.timeZone = undefined;
    goStyle.spec.jobTemplate.spec!.template.spec!.containers[0]!.command = ['echo', 'tick'];
    assert.deepEqual(run([], { scheduledEchos: [se], cronJobs: [goStyle] }), []);
  });

  it('fires on none, or two', () => {
    assert.deepEqual(kinds(run([], { scheduledEchos: [se] })), ['one-cronjob']);
    const second = { ...cronJob(), metadata: { ...cronJob().metadata, name: 's1-b' } };
    assert.deepEqual(kinds(run([], { scheduledEchos: [se], cronJobs: [cronJob(), second] })), ['one-cronjob']);
  });

  it('fires on a CronJob behind its spec (schedule, time zone, suspension, message), and on a status behind', () => {
    const edits: ((c: V1CronJob) => void)[] = [
      (c) => (c.spec.schedule = '*/1 * * * *'),
      (c) => (c.spec.timeZone = 'Europe/Madrid'),
      (c) => (c.spec.suspend = true),
      (c) => (c.spec.jobTemplate.spec!.template.spec!.containers[0]!.command = ['printf', '%s\\n', 'tock']),
    ];
    for (const edit of edits) {
      const c = cronJob();
      edit(c);
      assert.deepEqual(kinds(run([], { scheduledEchos: [se], cronJobs: [c] })), ['cronjob-matches-spec'], JSON.stringify(c.spec));
    }
    const behind = { ...se, status: { ...se.status, observedGeneration: 2 } };
    assert.deepEqual(kinds(run([], { scheduledEchos: [behind], cronJobs: [cronJob()] })), ['status-converges']);
  });
});

describe('write-outside-term', () => {
  const statusWrite = (at: number, replica: string): AuditRecordWithObjects =>
    record({ at, verb: 'patch', resource: 'echos', subresource: 'status', name: 'e1', replica });
  // r0 acquires at 0 and renews at 2 and 4 (its term lasts to 4 s + 15 s), r1 takes over at 30.
  const leases = [
    record({ ...leaseWrite(s(0), 'r0'), verb: 'create', code: 201 }),
    leaseWrite(s(1), 'r1', 409),
    leaseWrite(s(2), 'r0'),
    leaseWrite(s(4), 'r0'),
    leaseWrite(s(30), 'r1'),
  ];

  it('reads the terms from the successful Lease writes alone', () => {
    assert.deepEqual(leaseTerms(leases, LEASE), [
      { replica: 'r0', start: s(0), end: s(4) + 5 + 15_000 },
      { replica: 'r1', start: s(30), end: s(30) + 5 + 15_000 },
    ]);
  });

  it('is quiet on writes inside their replica’s term, and on Events', () => {
    const events = record({ at: s(25), verb: 'create', resource: 'events', name: 'x', replica: 'r0' });
    assert.deepEqual(run([...leases, statusWrite(s(10), 'r0'), statusWrite(s(31), 'r1'), events], {}, { lease: LEASE }), []);
  });

  it('fires on a write after the term lapsed, after the next replica’s acquire, or before any term', () => {
    for (const w of [statusWrite(s(25), 'r0'), statusWrite(s(31), 'r0'), statusWrite(s(3), 'r1')]) {
      const vs = run([...leases, w], {}, { lease: LEASE });
      assert.deepEqual(kinds(vs), ['write-outside-term'], `${w.replica} at ${w.at - T0} ms`);
      assert.match(vs[0]!.detail, new RegExp(`replica ${w.replica} made 1 write\\(s\\) outside its lease terms`));
    }
  });
});

describe('unexpected-exit', () => {
  it('fires on an exit the schedule did not design, and is quiet on a designed one', () => {
    assert.deepEqual(run([], {}, { exits: [{ replica: 'r0', designed: true }] }), []);
    const vs = run([], {}, { exits: [{ replica: 'r1', designed: false }] });
    assert.deepEqual(kinds(vs), ['unexpected-exit']);
    assert.match(vs[0]!.detail, /replica r1 exited \(code 1/);
  });
});

describe('exitAfterLeaseLoss (is an exit a lost lease, by what reached the replica)', () => {
  const RD = 3_000;
  const renewal = (receivedS: number, answeredS = receivedS + 0.01) => ({ receivedAt: s(receivedS), answeredAt: s(answeredS) });

  it('is a loss a renew deadline after the last renewal, and not before', () => {
    const renewals = [renewal(0), renewal(0.5), renewal(1)];
    assert.equal(exitAfterLeaseLoss(renewals, RD, s(4)), true);
    assert.equal(exitAfterLeaseLoss(renewals, RD, s(2)), false, 'still held');
    assert.equal(exitAfterLeaseLoss([], RD, s(10)), false, 'never held: no lease to lose');
  });

  it('counts no renewal whose answer the replica never got (a partition held it back)', () => {
    // The server applied a renewal at 3.5 s, but its answer is not among those that reached r0.
    assert.equal(exitAfterLeaseLoss([renewal(0), renewal(1)], RD, s(4)), true);
  });

  it('counts no renewal answered after the hold had lapsed, though the server applied it', () => {
    // Sent at 3.9 s, inside the hold that lapses at 4 s, answered at 4.05 s: the elector gave up at 4.
    assert.equal(exitAfterLeaseLoss([renewal(0), renewal(1), renewal(3.9, 4.05)], RD, s(4.06)), true);
    assert.equal(exitAfterLeaseLoss([renewal(0), renewal(1), renewal(3.9, 3.95)], RD, s(4.06)), false, 'in time: renewed');
  });

  it('dates a renewal from when it was sent, so a long-delayed one still renews', () => {
    // A renewal retried after Retry-After reaches the proxy at 3.5 s and is answered at once.
    assert.equal(exitAfterLeaseLoss([renewal(0), renewal(1), renewal(3.5)], RD, s(4.5)), false);
    assert.equal(exitAfterLeaseLoss([renewal(0), renewal(1), renewal(3.5)], RD, s(6.5)), true);
  });
});
