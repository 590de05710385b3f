/**
 * The fault campaign's judge against a real control plane without a node (its own, private):
 * the kubelet stand-in completes a Job as the job controller requires; the audit log holds what
 * the judge reads (server times, the replica a proxy impersonates, the bodies of Echo writes and
 * Job creates); checkInvariants reads the final state, quiet when the status tells the truth and
 * naming the Echo and both sides when it does not.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { V1Job, V1Pod } from '@kubernetes/client-node';
import { parse, stringify } from 'yaml';
import type { Echo } from '../../src/api/echo.js';
import { desiredJob } from '../../src/controllers/echo/desired.js';
import { auditOffset, readAudit, readAuditWithObjects } from '../../scripts/lab/faults/judge/audit.js';
import { checkInvariants, type Trace } from '../../scripts/lab/faults/judge/invariants.js';
import { startKubeletStandIn, type KubeletStandIn } from '../../scripts/lab/faults/runner/kubelet.js';
import { eventually } from '../support/eventually.js';
import { echoManifest, startPrivateControlPlane, type PrivateControlPlane } from '../support/faults.js';

const NS = 'faults-judge';
const tmp = mkdtempSync(join(tmpdir(), 'echoperator-faults-judge-'));
let cp: PrivateControlPlane;
let kubelet: KubeletStandIn | undefined;
let auditLog: string;
/** The audit log's end before this file wrote anything. */
let auditFrom: number;

before(async () => {
  cp = await startPrivateControlPlane({ node: false });
  auditLog = join(cp.state.dir, 'logs', 'audit.log');
  auditFrom = auditOffset(auditLog);
  cp.installCrds();
  cp.kubectl.ok(['create', 'namespace', NS]);
  kubelet = await startKubeletStandIn(cp.state.kubeconfig, [NS]);
});

after(async () => {
  await kubelet?.stop();
  await cp?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

/** Creates the Echo, then the Job our operator would make for it, as the admin. */
function echoWithJob(name: string, message: string): { echo: Echo; job: V1Job } {
  cp.kubectl.ok(['create', '-f', '-'], { namespace: NS, input: echoManifest(name, message) });
  const echo = cp.kubectl.json<Echo>(['get', 'echo', name, '-o', 'json'], { namespace: NS });
  const job = cp.kubectl.json<V1Job>(['create', '-f', '-', '-o', 'json'], {
    namespace: NS,
    input: JSON.stringify(desiredJob(echo, 'busybox:1.37')),
  });
  return { echo, job };
}

function completed(name: string): Promise<V1Job> {
  return eventually(
    `Job ${name} to complete`,
    () => {
      const job = cp.kubectl.json<V1Job>(['get', 'job', name, '-o', 'json'], { namespace: NS });
      const complete = job.status?.conditions?.some((c) => c.type === 'Complete' && c.status === 'True');
      return job.status?.succeeded === 1 && complete ? job : undefined;
    },
    30_000,
  );
}

/** Writes the status a correct program would write for a completed run. */
function tellTruth(echo: Echo, job: V1Job): void {
  const status = { phase: 'Succeeded', jobName: job.metadata!.name, observedGeneration: echo.metadata.generation };
  cp.kubectl.ok(['patch', 'echo', echo.metadata.name!, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })], {
    namespace: NS,
  });
}

const trace = (): Trace => ({
  program: 'test',
  namespace: NS,
  auditLogPath: auditLog,
  auditFrom,
  exits: [],
  workloadEnd: Date.now(),
  convergenceBoundMs: 2_000,
  adminKubeconfig: cp.state.kubeconfig,
});

test('the kubelet stand-in completes a Job without a node: its pod Succeeded, the Job succeeded 1 and Complete', async () => {
  const { job } = echoWithJob('e1', 'hello');
  await completed(job.metadata!.name!);
  const pods = cp.kubectl.json<{ items: V1Pod[] }>(['get', 'pods', '-l', `job-name=${job.metadata!.name}`, '-o', 'json'], {
    namespace: NS,
  });
  assert.deepEqual(
    pods.items.map((p) => [p.spec?.nodeName, p.status?.phase, p.status?.containerStatuses?.[0]?.state?.terminated?.exitCode]),
    [[undefined, 'Succeeded', 0]],
  );
  // The stand-in counts a pod once its patch is answered; that answer may still be unread here,
  // since kubectl runs synchronously and blocks this process's event loop while the Job completes.
  await eventually('the stand-in to count its completed pod', () => kubelet!.completed() > 0, 10_000);
  assert.equal(kubelet!.completed(), 1);
});

test('readAudit reads a real write by an impersonated replica, and the bodies the judge needs', async () => {
  // kubectl 1.32 has no --as-user-extra flag, but reads the kubeconfig's as-user-extra.
  const config = parse(readFileSync(cp.state.kubeconfig, 'utf8')) as { users: { user: Record<string, unknown> }[] };
  Object.assign(config.users[0]!.user, { as: 'judge-test', 'as-groups': ['system:masters'], 'as-user-extra': { replica: ['r7'] } });
  const impersonating = join(tmp, 'replica-r7.kubeconfig');
  writeFileSync(impersonating, stringify(config));
  const from = auditOffset(auditLog);
  const lease = {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { name: 'judge-test', namespace: NS },
    spec: { holderIdentity: 'r7' },
  };
  const before = Date.now();
  cp.kubectl.ok(['--kubeconfig', impersonating, 'create', '-f', '-'], { input: JSON.stringify(lease) });
  const { echo, job } = echoWithJob('e2', 'audited');

  const records = await eventually('the three writes in the audit log', () => {
    const all = readAuditWithObjects(auditLog, from);
    return all.length >= 3 ? all : undefined;
  });
  const leaseWrite = readAudit(auditLog, from).find((r) => r.resource === 'leases');
  assert.ok(leaseWrite, JSON.stringify(records.map((r) => [r.verb, r.resource, r.name])));
  assert.deepEqual(
    { ...leaseWrite, at: 0, done: 0, userAgent: '', auditID: '' },
    {
      at: 0,
      done: 0,
      verb: 'create',
      code: 201,
      resource: 'leases',
      namespace: NS,
      name: 'judge-test',
      replica: 'r7',
      userAgent: '',
      auditID: '',
    },
  );
  assert.match(leaseWrite.auditID ?? '', /^[0-9a-f-]{36}$/, "the server's Audit-ID, which the late class matches its delivered writes by");
  assert.ok(leaseWrite.at >= before - 1000 && leaseWrite.done >= leaseWrite.at, 'the server times, in ms');
  assert.match(leaseWrite.userAgent, /^kubectl/);

  const echoCreate = records.find((r) => r.resource === 'echos' && r.verb === 'create');
  assert.equal((echoCreate?.responseObject as Echo | undefined)?.metadata.uid, echo.metadata.uid, 'an Echo write logs its answer');
  const jobCreate = records.find((r) => r.resource === 'jobs' && r.verb === 'create');
  assert.equal(jobCreate?.name, job.metadata!.name);
  assert.equal(
    (jobCreate?.requestObject as V1Job | undefined)?.metadata?.ownerReferences?.[0]?.uid,
    echo.metadata.uid,
    'a Job create logs its request',
  );
  await completed(job.metadata!.name!);
});

test('checkInvariants names an Echo whose status is behind, with what it says and the truth, and is quiet once it is right', async () => {
  const e1 = cp.kubectl.json<Echo>(['get', 'echo', 'e1', '-o', 'json'], { namespace: NS });
  const e2 = cp.kubectl.json<Echo>(['get', 'echo', 'e2', '-o', 'json'], { namespace: NS });
  const jobs = cp.kubectl.json<{ items: V1Job[] }>(['get', 'jobs', '-o', 'json'], { namespace: NS }).items;
  const jobOf = (e: Echo): V1Job => jobs.find((j) => j.metadata?.ownerReferences?.[0]?.uid === e.metadata.uid)!;
  tellTruth(e1, jobOf(e1));

  const behind = await checkInvariants(trace());
  assert.deepEqual(
    behind.map((v) => v.invariant),
    ['status-converges'],
    JSON.stringify(behind),
  );
  assert.match(
    behind[0]!.detail,
    /^Echo faults-judge\/e2: status says jobName=undefined phase=undefined .*the truth: Job e2-\w+ phase Succeeded, generation 1 .*the bound is 2000 ms/,
  );

  tellTruth(e2, jobOf(e2));
  assert.deepEqual(await checkInvariants(trace()), []);
});
