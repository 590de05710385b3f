/**
 * Leader election with three real processes on the real control plane: exactly one reconciles,
 * a crashed leader is replaced within leaseDuration + retryPeriod, a stopped one at once, and the
 * periods in which processes reconcile never overlap.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { eventually, kubectl, kubectlOk, listItems, testNamespace } from '../support/kube.js';
import { haReplicaEnv, installCrds, startOperator, TEST_LEASE, waitReady, type OperatorProcess } from '../support/operator.js';
import { apiProxy } from '../support/proxy.js';
import { controllerWork, echoListManifest } from '../support/faults.js';
import { JITTER_FACTOR } from '../../src/runtime/leaderelection/config.js';

const LEASE = TEST_LEASE;

function holder(ns: string): string {
  const r = kubectl(['get', 'lease', 'echoperator', '-o', 'jsonpath={.spec.holderIdentity}'], { namespace: ns });
  return r.code === 0 ? r.stdout.trim() : '';
}

interface LogLine {
  ts: string;
  msg: string;
  [k: string]: unknown;
}

function logLines(op: OperatorProcess): LogLine[] {
  return op
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as LogLine);
}

/** [start, end] of each term in which this process ran workers (end = now if still running). */
function workPeriods(op: OperatorProcess, killedAt?: number): [number, number][] {
  const periods: [number, number][] = [];
  let start: number | undefined;
  for (const l of logLines(op)) {
    if (l.msg === 'started leading; starting workers') start = Date.parse(l.ts);
    // Every reconcile of this process must fall inside a period.
    if (l.reconcileID && start === undefined) periods.push([Date.parse(l.ts), Date.parse(l.ts)]);
    if (l.msg === 'workers stopped' && start !== undefined && l.controller === 'scheduledecho') {
      periods.push([start, Date.parse(l.ts)]);
      start = undefined;
    }
  }
  if (start !== undefined) periods.push([start, killedAt ?? Date.now()]);
  return periods;
}

function applyEchos(ns: string, from: number, to: number): void {
  const names = Array.from({ length: to - from }, (_, i) => `e${from + i}`);
  kubectlOk(['apply', '-f', '-'], { namespace: ns, input: echoListManifest(names, (n) => `m${n.slice(1)}`) });
}

function assertOneJobPerEcho(ns: string, count: number): void {
  const jobs = listItems<V1Job>(['get', 'jobs'], { namespace: ns });
  const perEcho = new Map<string, number>();
  for (const j of jobs)
    perEcho.set(j.metadata!.labels!['mmontes.io/echo']!, (perEcho.get(j.metadata!.labels!['mmontes.io/echo']!) ?? 0) + 1);
  assert.equal(perEcho.size, count);
  assert.ok(
    [...perEcho.values()].every((n) => n === 1),
    'no Echo has two Jobs',
  );
}

test('three replicas: one leader, crash and graceful takeovers, never two reconciling', { timeout: 180_000 }, async (t) => {
  installCrds();
  const ns = testNamespace(t, 'ha');
  const start = (id: string) => startOperator(t, haReplicaEnv(ns, id));
  const ops = new Map<string, OperatorProcess>();
  for (const id of ['op-0', 'op-1', 'op-2']) ops.set(id, await start(id));
  // Standbys are ready too (caches synced), so rolling updates proceed.
  for (const op of ops.values()) await waitReady(op);
  const first = await eventually('a leader', () => holder(ns));
  assert.ok(ops.has(first));

  applyEchos(ns, 0, 10);
  await eventually('10 Jobs', () => listItems<V1Job>(['get', 'jobs'], { namespace: ns }).length === 10);
  const leaders = [...ops.entries()].filter(([, op]) => logLines(op).some((l) => l.msg === 'started leading; starting workers'));
  assert.deepEqual(
    leaders.map(([id]) => id),
    [first],
    'exactly the holder runs workers',
  );

  // Crash: SIGKILL the leader; a standby takes over within leaseDuration of its seeing the last
  // renewal, and both that sighting and the acquire after expiry wait one jittered retry, up to
  // retryPeriod x (1 + JITTER_FACTOR) each, as client-go's do.
  const killedAt = Date.now();
  await ops.get(first)!.stop('SIGKILL');
  const second = await eventually(
    'a new leader',
    () => {
      const h = holder(ns);
      return h && h !== first && h;
    },
    30_000,
    50,
  );
  const crashTakeoverMs = Date.now() - killedAt;
  t.diagnostic(`crash takeover: ${crashTakeoverMs} ms (lease ${LEASE.duration} s, retry ${LEASE.retry} s)`);
  // Polling adds up to 50 ms, and process scheduling on a loaded CI machine some more.
  const takeoverBoundMs = (LEASE.duration + 2 * LEASE.retry * (1 + JITTER_FACTOR)) * 1000 + 1500;
  assert.ok(crashTakeoverMs <= takeoverBoundMs, `crash takeover took ${crashTakeoverMs} ms (bound ${takeoverBoundMs} ms)`);
  const periods = new Map<string, [number, number][]>([[first, workPeriods(ops.get(first)!, killedAt)]]);

  applyEchos(ns, 10, 20);
  await eventually('20 Jobs', () => listItems<V1Job>(['get', 'jobs'], { namespace: ns }).length === 20);

  // Graceful: SIGTERM the leader; it releases the Lease, and a standby takes over at once.
  const stoppedAt = Date.now();
  const exitCode = await ops.get(second)!.stop('SIGTERM');
  assert.equal(exitCode, 0, 'a graceful stop exits 0');
  const third = await eventually(
    'the next leader',
    () => {
      const h = holder(ns);
      return h && h !== second && h !== first && h;
    },
    30_000,
    50,
  );
  const handoverMs = Date.now() - stoppedAt;
  t.diagnostic(`graceful handover: ${handoverMs} ms`);
  assert.ok(handoverMs < LEASE.duration * 1000, `graceful handover took ${handoverMs} ms, not less than the lease duration`);
  periods.set(second, workPeriods(ops.get(second)!));

  applyEchos(ns, 20, 30);
  await eventually('30 Jobs', () => listItems<V1Job>(['get', 'jobs'], { namespace: ns }).length === 30);
  // The leader done with what the Jobs' events queued: a duplicate would have been made by now.
  await eventually('the leader to be idle', async () => (await controllerWork(ops.get(third)!, 'echo')).idle);
  assertOneJobPerEcho(ns, 30);
  periods.set(
    third,
    await eventually('the third term in the log', () => workPeriods(ops.get(third)!).length > 0 && workPeriods(ops.get(third)!)),
  );

  const all = [...periods.entries()].flatMap(([id, ps]) => ps.map(([s, e]) => ({ id, s, e })));
  for (const a of all) {
    for (const b of all) {
      if (a.id === b.id) continue;
      assert.ok(a.e < b.s || b.e < a.s, `${a.id} [${a.s}, ${a.e}] overlaps ${b.id} [${b.s}, ${b.e}]`);
    }
  }
});

test('a leader that cannot renew stops reconciling and exits non-zero; a standby takes over', { timeout: 120_000 }, async (t) => {
  installCrds();
  const ns = testNamespace(t, 'ha-cut');
  const env = (id: string, kubeconfig?: string) => ({ ...haReplicaEnv(ns, id), ...(kubeconfig ? { KUBECONFIG: kubeconfig } : {}) });
  const proxy = await apiProxy(t, true);
  const leader = await startOperator(t, env('behind-proxy', proxy.kubeconfig));
  await waitReady(leader);
  await eventually('it leads', () => holder(ns) === 'behind-proxy');
  const standby = await startOperator(t, env('standby'));
  await waitReady(standby);

  const cutAt = Date.now();
  proxy.cut();
  const code = await leader.exited;
  const exitedAfter = Date.now() - cutAt;
  assert.notEqual(code, 0, 'losing leadership exits non-zero');
  assert.match(leader.output(), /leadership lost/);
  t.diagnostic(`the cut-off leader exited ${exitedAfter} ms after the cut (renew deadline ${LEASE.renew} s)`);
  const lastWork = Math.max(...workPeriods(leader, Date.now()).map(([, e]) => e));

  await eventually('the standby leads', () => holder(ns) === 'standby', 30_000, 50);
  applyEchos(ns, 0, 5);
  await eventually('5 Jobs', () => listItems<V1Job>(['get', 'jobs'], { namespace: ns }).length === 5);
  // Log lines reach us through a pipe, a little after the fact.
  const standbyStart = (await eventually('the standby logged its term', () => workPeriods(standby)[0]))[0];
  assert.ok(lastWork < standbyStart, 'the old leader had stopped working before the new one started');
});
