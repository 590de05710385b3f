/**
 * Plays one schedule on the campaign's control plane and judges it.
 *
 * A fresh namespace (deleted after), the program's RBAC in it, one fault proxy per replica
 * (runner/replicas.ts), the kubelet stand-in completing Job pods, the workload (workloads.ts) with
 * the faults at their times (runner/faults.ts); then quiescence, detected by condition: the state
 * rules of the judge hold and no replica wrote anything over two polls, or the bound passed. Then
 * the trace goes to checkInvariants, and the replicas are stopped.
 *
 * Replicas: one, except for the HA classes (stale, partition, late): a leader (r0, which holds the Lease
 * before the standby starts) and a standby (r1). Every program runs with leader election when it
 * has it (a Lease in the schedule's namespace), so "no write outside a term" is judged in every
 * class; its resync period is CAMPAIGN_RESYNC_S.
 *
 * Guarantees: whatever happens (a program that never starts, an API server that does not come
 * back), the replicas, proxies and the stand-in are stopped and the namespace deletion is sent
 * before runSchedule settles.
 */
import { createNamespace, deleteNamespace } from '../../bench/api.js';
import type { BenchEnv } from '../../bench/env.js';
import type { ControlPlaneState } from '../../../testbed/controlplane/cluster.js';
import { kubectlFor } from '../../../testbed/kubectl.js';
import { join } from 'node:path';
import { auditOffset, readAudit } from '../judge/audit.js';
import { checkInvariants, readFinalState, type Trace, type Violation } from '../judge/invariants.js';
import { echoViolations, scheduledEchoViolations } from '../judge/state.js';
import type { RemovedJob } from '../judge/removed-job.js';
import { leaseTerms } from '../judge/terms.js';
import { startKubeletStandIn } from './kubelet.js';
import { LEASE_NAME, type Program } from '../programs/programs.js';
import { armBeforeWorkload, classViolations, play, prepareStandby, type FaultContext } from './faults.js';
import { readAuditWithObjects } from '../judge/audit.js';
import { prepareStaleApiserver, standbyUpstream } from '../classes/stale-apiserver.js';
import type { SecondApiserver } from './second-apiserver.js';
import { ReplicaSet } from './replicas.js';
import { sumEffects, type ScheduleEffects } from './effects.js';
import { CAMPAIGN_RESYNC_S, HA_CLASSES, type Faults, type Schedule, type WorkloadName } from '../schedules.js';
import type { TimelineEvent } from '../timeline.js';
import { runWorkload, type WorkloadContext } from '../workloads.js';
import { runSequence } from '../generated/play.js';
import { deliveredLate } from '../classes/late.js';
import { refusalViolations } from '../classes/refusal.js';

export interface RunnerEnv {
  bench: BenchEnv;
  state: ControlPlaneState;
  programs: Map<string, Program>;
  log: (line: string) => void;
}

export interface ScheduleOutcome {
  trace: Trace;
  violations: Violation[];
  timeline: TimelineEvent[];
  /** Counted writes of all replicas (a clean run's is the workload's K). */
  writes: number;
  durationMs: number;
  /** Faults that found no target, gates the program missed. */
  notes: string[];
  /** What the faults did (runner/effects.ts). */
  effects: ScheduleEffects;
  /** Replicas that exited before they were ready (restarted with back-off, not violations). */
  startupExits: number;
}

/** How long after the workload's (and the faults') end the status must have converged. */
const CONVERGENCE_BOUND_MS = 20_000;
/**
 * How long one workload gate waits for the program (before the workload goes on regardless): the
 * convergence bound, applied to each step's writes. A gate that times out is a status-converges
 * violation even when the program catches up later (a later write can show it what it missed).
 */
const GATE_TIMEOUT_MS = CONVERGENCE_BOUND_MS;
const POLL_MS = 250;

export const auditLogPath = (state: ControlPlaneState): string => join(state.dir, 'logs', 'audit.log');

export async function runSchedule(schedule: Schedule, env: RunnerEnv): Promise<ScheduleOutcome> {
  return play1(schedule.program, schedule.workload, schedule.faults, schedule.seed, env, schedule.id);
}

/** A clean run (no fault): what the intermediate class's K counts. */
export async function dryRun(program: string, workload: WorkloadName, env: RunnerEnv): Promise<ScheduleOutcome> {
  return play1(program, workload, undefined, 0, env, `dry.${workload}`);
}

async function play1(
  programName: string,
  workload: WorkloadName,
  scheduleFaults: Faults | undefined,
  seed: number,
  env: RunnerEnv,
  id: string,
): Promise<ScheduleOutcome> {
  const started = Date.now();
  const program = env.programs.get(programName);
  if (!program) throw new Error(`program ${programName} is not loaded`);
  const ns = await createNamespace(env.bench, `faults-${id.replace(/[^a-z0-9]+/g, '-')}`.slice(0, 50));
  const timeline: TimelineEvent[] = [];
  const notes: string[] = [];
  const seen: FaultContext['effects'] = {};
  const audit = auditLogPath(env.state);
  const auditFrom = auditOffset(audit);
  const rbac = program.rbac(ns);
  await kubectlFor(env.bench.kubeconfig).okAsync(['apply', '--server-side', '--field-manager=echoperator-faults', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: rbac.manifests }),
  });
  const kubelet = await startKubeletStandIn(env.bench.kubeconfig, [ns]);
  const replicas = new ReplicaSet({
    program,
    adminKubeconfig: env.bench.kubeconfig,
    namespace: ns,
    auditLogPath: audit,
    auditFrom,
    impersonate: { user: rbac.user, groups: rbac.groups },
    env: { RESYNC_PERIOD_SECONDS: String(CAMPAIGN_RESYNC_S) },
    log: (l) => env.log(`${id} ${programName}: ${l}`),
  });
  const lease: Trace['lease'] =
    program.leaderElection && program.lease ? { namespace: ns, name: LEASE_NAME, durationS: program.lease.durationS } : undefined;
  let second: SecondApiserver | undefined;
  // A generated schedule plays its sequence in place of the workload, with its mixed fault.
  const sequence = scheduleFaults?.class === 'generated' ? scheduleFaults : undefined;
  const faults = sequence ? sequence.fault : scheduleFaults;
  try {
    const ha = faults !== undefined && HA_CLASSES.includes(faults.class);
    if (faults?.class === 'stale-apiserver') second = await prepareStaleApiserver(env.state, env.log);
    const first = await replicas.startReady();
    if (ha) {
      if (!(await replicas.holdsLease(first, 30_000))) notes.push(`${first.name} did not take the Lease in 30 s`);
      await replicas.startReady(
        prepareStandby(faults),
        second && faults.class === 'stale-apiserver' ? standbyUpstream(faults, second) : undefined,
      );
    }
    const ctx: FaultContext | undefined = faults && {
      faults,
      rest: env.bench.rest,
      namespace: ns,
      seed,
      replicas,
      state: env.state,
      log: env.log,
      timeline,
      notes,
      effects: seen,
      ...(second ? { secondApiserver: second } : {}),
    };
    if (ctx) await armBeforeWorkload(ctx, first);
    let faultsDone: Promise<unknown> = Promise.resolve();
    const workloadCtx: WorkloadContext = {
      rest: env.bench.rest,
      namespace: ns,
      gateTimeoutMs: GATE_TIMEOUT_MS,
      onStart: () => {
        // Caught at once (the workload is still running), rethrown below.
        if (ctx)
          faultsDone = play(ctx, Date.now()).then(
            () => undefined,
            (err: unknown) => ({ err }),
          );
      },
    };
    const result = sequence ? await runSequence(sequence.ops, workloadCtx) : await runWorkload(workload, workloadCtx);
    const faultFailure = (await faultsDone) as { err: unknown } | undefined;
    if (faultFailure) throw faultFailure.err;
    const workloadEnd = result.lastWriteAt;
    const boundMs = Date.now() - workloadEnd + CONVERGENCE_BOUND_MS;
    const removedJobs = seen.ttl ? [seen.ttl] : [];
    await quiescence(env, ns, replicas, Date.now() + CONVERGENCE_BOUND_MS, removedJobs);
    const effects: ScheduleEffects = { ...sumEffects(replicas.all.map((r) => r.proxy.effects())), ...seen };
    const trace: Trace = {
      program: programName,
      namespace: ns,
      auditLogPath: audit,
      auditFrom,
      ...(lease ? { lease } : {}),
      exits: replicas.exits(),
      workloadEnd,
      convergenceBoundMs: boundMs,
      adminKubeconfig: env.bench.kubeconfig,
      deliveredLate: deliveredLate(seen.late),
      removedJobs,
    };
    const violations = [
      ...result.lateGates.map((g) => ({
        invariant: 'status-converges' as const,
        detail: `the status of ${g} did not show the workload's writes within ${GATE_TIMEOUT_MS} ms of them`,
      })),
      ...(result.violations ?? []),
      ...(await checkInvariants(trace)),
      ...refusalViolations(seen.refusal),
      ...(ctx ? classViolations(ctx, readAuditWithObjects(audit, auditFrom), await readFinalState(env.bench.rest, ns)) : []),
    ];
    const startupExits = trace.exits.filter((e) => e.startup).length;
    return { trace, violations, timeline, writes: replicas.writeCount(), durationMs: Date.now() - started, notes, effects, startupExits };
  } finally {
    await replicas.stopAll();
    await second?.stop();
    await kubelet.stop();
    finishTimeline(timeline, replicas, audit, auditFrom, lease);
    void deleteNamespace(env.bench, ns, { wait: false }).catch((err: unknown) => env.log(`deleting ${ns}: ${String(err)}`));
  }
}

/**
 * Quiescence: the final state satisfies the judge's state rules, and no replica wrote over two
 * consecutive polls; or the deadline passed (the judge then says what did not converge).
 */
async function quiescence(env: RunnerEnv, ns: string, replicas: ReplicaSet, deadline: number, removed: RemovedJob[]): Promise<void> {
  let lastWrites = -1;
  let calm = 0;
  while (Date.now() < deadline) {
    const writes = replicas.writeCount();
    let settled = false;
    try {
      const state = await readFinalState(env.bench.rest, ns);
      settled = echoViolations(state, removed).length === 0 && scheduledEchoViolations(state).length === 0;
    } catch {
      settled = false; // the API server restarting: not yet
    }
    calm = settled && writes === lastWrites ? calm + 1 : 0;
    if (calm >= 2) return;
    lastWrites = writes;
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

/** Adds each replica's life, writes and lease terms to the timeline. */
function finishTimeline(timeline: TimelineEvent[], replicas: ReplicaSet, audit: string, auditFrom: number, lease: Trace['lease']): void {
  const end = Date.now();
  for (const r of replicas.all) {
    const how = r.exit ? (r.exit.signal ?? `exit ${r.exit.code}`) : 'running';
    timeline.push({ kind: 'life', replica: r.name, from: r.startedAt, to: r.exit?.at ?? end, end: how });
    for (const w of r.proxy.writes()) timeline.push({ kind: 'write', replica: r.name, at: w.at, label: `${w.verb} ${w.path} ${w.status}` });
  }
  if (lease)
    for (const t of leaseTerms(readAudit(audit, auditFrom), lease))
      timeline.push({ kind: 'term', replica: t.replica, from: t.start, to: Math.min(t.end, end) });
}
