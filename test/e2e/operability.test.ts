/**
 * What people who run the operator see: metrics that move, probes that tell the truth, Events in
 * kubectl, and a clear exit for bad settings.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import type { CoreV1Event } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import { applyEcho, eventually, kubeconfig, kubectl, kubectlOk, listItems, testNamespace } from '../support/kube.js';
import { getEcho } from '../support/runs.js';
import { metricSample, scrape } from '../support/http.js';
import { controllerWork } from '../support/faults.js';
import { apiProxy } from '../support/proxy.js';
import { denyJobCreates, PROBE_JOB } from '../../scripts/testbed/admission.js';
import { haReplicaEnv, installCrds, operatorCommand, startOperator, waitReady, type OperatorProcess } from '../support/operator.js';

async function metrics(op: OperatorProcess): Promise<string> {
  return scrape(op.metricsPort);
}

test('metrics move with reconciles; the leader reports 1 and a standby 0', async (t) => {
  installCrds();
  const ns = testNamespace(t, 'metrics');
  const a = await startOperator(t, haReplicaEnv(ns, 'a'));
  await waitReady(a);
  await eventually(
    'a leads',
    () => kubectl(['get', 'lease', 'echoperator', '-o', 'jsonpath={.spec.holderIdentity}'], { namespace: ns }).stdout === 'a',
  );
  const b = await startOperator(t, haReplicaEnv(ns, 'b'));
  await waitReady(b);
  const before = await metrics(a);
  assert.equal(metricSample(before, 'leader_election_master_status'), 1);
  assert.equal(metricSample(await metrics(b), 'leader_election_master_status'), 0);
  assert.match(before, /process_resident_memory_bytes/);

  for (let i = 0; i < 3; i++) applyEcho(ns, `m${i}`, `metric ${i}`);
  await eventually('3 Echo statuses', () => listItems<Echo>(['get', 'echos'], { namespace: ns }).every((e) => e.status?.jobName) && true);
  // Settled: the status writes' own events reconciled, nothing queued or in flight.
  const after = await eventually('the leader to be idle', async () => {
    const work = await controllerWork(a, 'echo');
    return work.idle && work.text;
  });
  const delta = (name: string, labels: Record<string, string> = {}) =>
    metricSample(after, name, labels) - metricSample(before, name, labels);
  const reconciles = delta('controller_runtime_reconcile_total', { controller: 'echo' });
  assert.ok(reconciles >= 3, `at least one reconcile per Echo (got ${reconciles})`);
  assert.equal(delta('controller_runtime_reconcile_total', { controller: 'echo', result: 'error' }), 0);
  assert.equal(delta('controller_runtime_reconcile_errors_total', { controller: 'echo' }), 0);
  assert.equal(delta('controller_runtime_reconcile_time_seconds_count', { controller: 'echo' }), reconciles, 'one duration per reconcile');
  assert.ok(delta('workqueue_adds_total', { name: 'echo' }) >= 3);
  assert.equal(metricSample(after, 'workqueue_depth', { name: 'echo' }), 0);
  assert.equal(metricSample(after, 'controller_runtime_active_workers', { controller: 'echo' }), 0);
  // The standby reconciled nothing.
  assert.equal(metricSample(await metrics(b), 'controller_runtime_reconcile_total', { controller: 'echo' }), 0);
});

test('/readyz fails until the caches have synced, then passes', async (t) => {
  installCrds();
  const ns = testNamespace(t, 'ready');
  const proxy = await apiProxy(t, false);
  const op = await startOperator(t, { WATCH_NAMESPACES: ns, NAMESPACE: ns, KUBECONFIG: proxy.kubeconfig });
  const url = `http://127.0.0.1:${op.healthPort}`;
  const probe = await eventually('the probe server', async () => {
    try {
      return await fetch(`${url}/readyz?verbose`);
    } catch {
      return undefined;
    }
  });
  assert.ok(!probe.ok, `not ready before the caches sync (got ${probe.status})`);
  assert.equal((await fetch(`${url}/healthz`)).status, 200, 'alive while waiting for the API server');
  // Still not ready once it has been trying to reach the API server (through the shut proxy).
  await eventually('the operator to try the API server', () => proxy.attempts() > 0);
  assert.ok(!(await fetch(`${url}/readyz`)).ok);
  proxy.open();
  await waitReady(op, 60_000);
  assert.equal((await fetch(`${url}/readyz`)).status, 200);
});

test('a failing loop makes a bounded number of Events and says why in status', async (t) => {
  installCrds();
  const ns = testNamespace(t, 'events');
  const op = await startOperator(t, { WATCH_NAMESPACES: ns, NAMESPACE: ns });
  await waitReady(op);

  // An admission policy that refuses new Jobs here: every reconcile of this Echo fails, and keeps failing.
  denyJobs(t, ns);
  applyEcho(ns, 'stuck', 'never runs');
  const stuck = await eventually('the failure in status', () => {
    const e = getEcho(ns, 'stuck');
    return e.status?.conditions?.find((c) => c.type === 'Reconciled' && c.status === 'False') && e;
  });
  assert.match(JSON.stringify(stuck.status!.conditions), /no new Jobs here/);
  // Enough failed reconciles for a spam filter to matter (the backoff doubles from 5 ms: about 5 s
  // for ten), and their Event aggregated.
  await eventually(
    'ten failed reconciles',
    async () => metricSample(await metrics(op), 'controller_runtime_reconcile_errors_total', { controller: 'echo' }) >= 10,
    60_000,
  );
  await eventually(
    'the ReconcileFailed Event',
    () =>
      listItems<CoreV1Event>(['get', 'events', '--field-selector', 'involvedObject.name=stuck,reason=ReconcileFailed'], { namespace: ns })
        .length > 0,
  );
  const failures = listItems<CoreV1Event>(['get', 'events', '--field-selector', 'involvedObject.name=stuck,reason=ReconcileFailed'], {
    namespace: ns,
  });
  const total = failures.reduce((n, e) => n + (e.count ?? 1), 0);
  const reconcileErrors = metricSample(await metrics(op), 'controller_runtime_reconcile_errors_total', { controller: 'echo' });
  assert.ok(failures.length >= 1 && failures.length <= 2, `failures are aggregated into one Event (got ${failures.length})`);
  assert.ok(total <= 25, `the spam filter bounds the Events (count ${total}, after ${reconcileErrors} failed reconciles)`);
  assert.ok(reconcileErrors >= 3, 'the failure is retried with backoff, not dropped');
});

/** A ValidatingAdmissionPolicy (real server-side admission) that refuses Job creation in ns. */
function denyJobs(t: { after(fn: () => unknown): void }, ns: string): void {
  const name = `deny-jobs-${ns}`;
  kubectlOk(['label', 'namespace', ns, `echoperator-test/deny-jobs=${ns}`]);
  const [policy, binding] = denyJobCreates(name, { 'echoperator-test/deny-jobs': ns }, 'no new Jobs here');
  t.after(() => kubectl(['delete', 'validatingadmissionpolicybinding,validatingadmissionpolicy', name, '--ignore-not-found']));
  kubectlOk(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [policy, binding] }) });
  // The policy is enforced once the apiserver has loaded it: wait until a dry-run create is refused.
  const probe = JSON.stringify(PROBE_JOB);
  const deadline = Date.now() + 20_000;
  while (kubectl(['create', '--dry-run=server', '-f', '-'], { namespace: ns, input: probe }).code === 0) {
    if (Date.now() > deadline) throw new Error('the admission policy was not enforced within 20 s');
    spawnSync('sleep', ['0.2']);
  }
}

test('each invalid setting stops the process with exit code 2 and its own message', () => {
  const [cmd, ...args] = operatorCommand();
  const cases: [Record<string, string>, RegExp][] = [
    [{ NUM_WORKERS: 'abc' }, /NUM_WORKERS.*--num-workers.*"abc"/],
    [{ NUM_WORKERS: '0' }, /NUM_WORKERS/],
    [{ HA_ENABLED: 'yes please' }, /HA_ENABLED.*true.*false/],
    [{ LOG_LEVEL: 'loud' }, /LOG_LEVEL.*debug.*info.*warn.*error/],
    [{ METRICS_PORT: '70000' }, /METRICS_PORT/],
    [{ HA_LEASE_DURATION_SECONDS: '5', HA_RENEW_DEADLINE_SECONDS: '10' }, /HA_LEASE_DURATION_SECONDS.*HA_RENEW_DEADLINE_SECONDS/s],
    [{ KUBECONFIG: '/nonexistent/kubeconfig' }, /KUBECONFIG points at \/nonexistent\/kubeconfig, which does not exist/],
    [{ METRICS_CERT_DIR: '/tmp', METRICS_INSECURE_PLAIN_HTTP: 'true' }, /METRICS_CERT_DIR.*METRICS_INSECURE_PLAIN_HTTP=true/],
    [
      { METRICS_CERT_DIR: '/nonexistent/certs' },
      /invalid METRICS_CERT_DIR \(--metrics-cert-dir\).*cannot read \/nonexistent\/certs\/tls\.crt/,
    ],
  ];
  const seen = new Set<string>();
  for (const [env, message] of cases) {
    const r = spawnSync(cmd!, args, { env: { ...process.env, KUBECONFIG: kubeconfig(), ...env }, encoding: 'utf8', timeout: 30_000 });
    assert.equal(r.status, 2, `${JSON.stringify(env)} exits 2 (stderr: ${r.stderr})`);
    assert.match(r.stderr, message);
    seen.add(r.stderr);
  }
  assert.equal(seen.size, cases.length, 'every case has its own message');
});
