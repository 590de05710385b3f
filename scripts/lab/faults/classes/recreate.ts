/**
 * The recreate class: an Echo deleted and re-created under the same name (a new uid, the old or a
 * new message) across a failover. The leader is SIGKILLed and the standby, whose Echo watches lag
 * (as in the stale class), takes the Lease; so the new leader may lead while its cache still holds
 * the Echo the server deleted, with the old uid, and the old Echo's Job already removed by the
 * garbage collector. The order is drawn: the Echo re-created, then the leader killed; or the
 * leader killed, then the Echo re-created during the takeover (the re-create in flight).
 *
 * The Echo is the class's own (RECREATED_ECHO, created by the fault at the workload's start, its
 * run finished before the re-create), so the workload goes on as in a clean run.
 *
 * Oracles, besides the judge's rules (one Job per generation, the final state): no Job is created
 * for the old uid after its delete was acknowledged (job-after-delete), and the new Echo's status
 * never names a Job made for the old uid (old-job-taken; sampled while the fault plays, and on the
 * final state). Effect: the new leader led, after the delete was acknowledged, while its proxy had
 * not yet passed it the old uid's DELETED event (staleLeadMs), or took over between the delete and
 * the re-create (in flight).
 *
 * Pure but for playRecreate: recreateFaults is a function of the draws, recreateViolations and
 * the effect functions of their arguments.
 */
import type { V1Job } from '@kubernetes/client-node';
import { ECHOS, type Echo } from '../../../../src/api/echo.js';
import { isNotFound } from '../../../../src/kube/errors.js';
import { resourcePath } from '../../../../src/kube/resources.js';
import { eventually } from '../../../testbed/eventually.js';
import { withRetry } from '../../bench/api.js';
import { sleep } from '../../bench/log.js';
import type { AuditRecordWithObjects } from '../judge/audit.js';
import { controllerOf } from '../judge/pod.js';
import { iso, type FinalState, type Violation } from '../judge/types.js';
import { intBetween, pick } from '../random.js';
import type { FaultRun } from '../runner/context.js';
import type { ProgramTraits } from '../vocabulary.js';
import { finishedJobOf } from '../workloads.js';
import { createTarget, getEcho, listJobs, skipped } from './target.js';

/** The schedule being played, as this class's code sees it. */
type FaultContext = FaultRun<{ recreate?: RecreateEffect }>;

export const RECREATED_ECHO = 'recreated';
export const RECREATE_MESSAGES = { old: 'before the re-create', new: 'after the re-create' } as const;
/** The standby's Echo watch lag, ms: longer than a takeover (a lease duration and a retry), as the stale class's Echo-only lag. */
export const RECREATE_WATCH_DELAYS_MS = [6000, 7000, 8000] as const;
/** Echo watches: the ones the standby's proxy delays. */
export const ECHO_WATCHES = /\/echos$/;
const RUN_TIMEOUT_MS = 20_000;
const TAKEOVER_TIMEOUT_MS = 30_000;
const SAMPLE_MS = 250;

export interface RecreateFaults {
  class: 'recreate';
  /** delete-then-kill: the Echo re-created, then the leader killed offsetMs later; kill-then-delete: the other way round. */
  order: 'delete-then-kill' | 'kill-then-delete';
  offsetMs: number;
  /** The new Echo prints RECREATE_MESSAGES.new (else the old message: only its uid differs). */
  newMessage: boolean;
  /** How late the standby's Echo watch events reach it. */
  watchDelayMs: number;
}

export function recreateFaults(random: () => number, program: ProgramTraits): RecreateFaults {
  const lease = program.lease ?? { durationS: 15, renewS: 10, retryS: 2 };
  const order = random() < 0.5 ? 'delete-then-kill' : 'kill-then-delete';
  return {
    class: 'recreate',
    order,
    // After the kill: within the lease duration, so the re-create lands before or around the takeover.
    offsetMs: order === 'delete-then-kill' ? intBetween(random, 0, 1000) : intBetween(random, 0, lease.durationS * 1000),
    newMessage: random() < 0.5,
    watchDelayMs: pick(random, RECREATE_WATCH_DELAYS_MS),
  };
}

export interface RecreateEffect {
  oldUid: string;
  newUid?: string;
  /** Date.now() when the delete and the re-create were answered. */
  deletedAt: number;
  createdAt?: number;
  /** When the standby took the Lease (at most 100 ms after its write). */
  takeoverAt?: number;
  /** When the standby's proxy passed it the old uid's DELETED event (unset: not while the fault watched). */
  deleteSeenAt?: number;
  /** How long the new leader led, after the delete was answered, with the old uid still in its cache (ms). */
  staleLeadMs: number;
  /** The takeover came between the delete and the re-create's answer. */
  inFlight: boolean;
  /** The jobName values the new Echo's status showed while sampled. */
  statusJobNames: string[];
}

/** ms the new leader led, after the delete, before the DELETED event reached it (until `end` if it never did). */
export function staleLeadMs(e: Pick<RecreateEffect, 'deletedAt' | 'takeoverAt' | 'deleteSeenAt'>, end: number): number {
  if (e.takeoverAt === undefined) return 0;
  return Math.max(0, (e.deleteSeenAt ?? end) - Math.max(e.takeoverAt, e.deletedAt));
}

export function recreateHadEffect(e: RecreateEffect | undefined): boolean {
  return e !== undefined && (e.staleLeadMs > 0 || e.inFlight);
}

export function recreateSummary(e: RecreateEffect): string {
  const how = e.takeoverAt === undefined ? 'no takeover' : `took over ${e.takeoverAt - e.deletedAt} ms after the delete`;
  return `Echo re-created (${how}${e.inFlight ? ', the re-create in flight' : ''}, led ${e.staleLeadMs} ms with the old uid cached)`;
}

export async function playRecreate(ctx: FaultContext, f: RecreateFaults): Promise<void> {
  const { rest, namespace: ns } = ctx;
  const standby = ctx.replicas.all[1];
  if (!standby) return skipped(ctx, 'no standby');
  const old = await createTarget(rest, ns, RECREATED_ECHO, RECREATE_MESSAGES.old);
  const oldUid = old.metadata.uid!;
  const finished = await eventually(
    `the run of ${RECREATED_ECHO}`,
    async () => finishedJobOf(await getEcho(rest, ns, RECREATED_ECHO), await listJobs(rest, ns)) !== undefined,
    RUN_TIMEOUT_MS,
    100,
  ).catch(() => false);
  if (!finished) ctx.notes.push(`the run of ${RECREATED_ECHO} did not finish within ${RUN_TIMEOUT_MS} ms: re-created anyway`);
  let deleteSeenAt: number | undefined;
  standby.proxy.onWatchEvent((path, ev) => {
    if (ECHO_WATCHES.test(path) && ev.type === 'DELETED' && ev.object.metadata?.uid === oldUid) deleteSeenAt ??= Date.now();
  });
  const effect: RecreateEffect = { oldUid, deletedAt: 0, staleLeadMs: 0, inFlight: false, statusJobNames: [] };
  ctx.effects.recreate = effect;
  const sampling = { on: true };
  const recreate = async (): Promise<void> => {
    const from = Date.now();
    await withRetry(async () => {
      try {
        await rest.request('DELETE', resourcePath(ECHOS, ns, RECREATED_ECHO));
      } catch (err) {
        if (!isNotFound(err)) throw err;
      }
    }, 12);
    effect.deletedAt = Date.now();
    const created = await createTarget(rest, ns, RECREATED_ECHO, f.newMessage ? RECREATE_MESSAGES.new : RECREATE_MESSAGES.old);
    effect.createdAt = Date.now();
    effect.newUid = created.metadata.uid!;
    ctx.timeline.push({ kind: 'fault', from, to: effect.createdAt, label: `${RECREATED_ECHO} deleted and re-created` });
    void sampleStatus(ctx, effect, sampling);
  };
  const kill = (): boolean => {
    const leader = ctx.replicas.leader();
    if (!leader || leader.exit || leader === standby) return false;
    ctx.replicas.kill(leader, 'SIGKILL');
    ctx.timeline.push({ kind: 'fault', replica: leader.name, from: Date.now(), to: Date.now(), label: 'SIGKILL' });
    return true;
  };
  let killed: boolean;
  if (f.order === 'delete-then-kill') {
    await recreate();
    await sleep(f.offsetMs);
    killed = kill();
  } else {
    killed = kill();
    await sleep(f.offsetMs);
    await recreate();
  }
  try {
    if (!killed) return skipped(ctx, 'no running leader to kill (or the standby leads already)');
    if (!(await ctx.replicas.holdsLease(standby, TAKEOVER_TIMEOUT_MS)))
      return skipped(ctx, `${standby.name} did not take the Lease within ${TAKEOVER_TIMEOUT_MS} ms`);
    // holdsLease may resolve after a takeover that came before the re-create: the audit log's word is later than the write.
    effect.takeoverAt = Date.now();
    effect.inFlight = effect.createdAt === undefined || effect.takeoverAt < effect.createdAt;
    // The new leader acts from its lagging view until the DELETED event reaches it: watch that long, and a little more.
    await eventually('the DELETED event at the new leader', () => deleteSeenAt !== undefined, f.watchDelayMs + 2000, 100).catch(
      () => undefined,
    );
    const end = Date.now();
    effect.deleteSeenAt = deleteSeenAt;
    effect.staleLeadMs = staleLeadMs(effect, end);
    ctx.timeline.push({ kind: 'fault', replica: standby.name, from: effect.takeoverAt, to: end, label: 'leads, the old uid cached' });
  } finally {
    standby.proxy.onWatchEvent(undefined);
    sampling.on = false;
  }
}

/** Samples the new Echo's status.jobName while the fault plays (an old Job taken may be let go before the end). */
async function sampleStatus(ctx: FaultContext, effect: RecreateEffect, sampling: { on: boolean }): Promise<void> {
  while (sampling.on) {
    try {
      const e = await getEcho(ctx.rest, ctx.namespace, RECREATED_ECHO);
      const name = e.metadata.uid === effect.newUid ? e.status?.jobName : undefined;
      if (name && !effect.statusJobNames.includes(name)) effect.statusJobNames.push(name);
    } catch {
      // the API server busy: the next sample
    }
    await sleep(SAMPLE_MS);
  }
}

/** Job creates answered 201, with the uid of the Echo their controller reference names. */
function jobCreates(records: readonly AuditRecordWithObjects[]): { name: string; at: number; replica?: string; ownerUid?: string }[] {
  return records
    .filter((r) => r.resource === 'jobs' && r.verb === 'create' && r.code === 201 && r.name)
    .map((r) => ({
      name: r.name!,
      at: r.at,
      ...(r.replica ? { replica: r.replica } : {}),
      ownerUid: controllerOf((r.requestObject as V1Job | undefined)?.metadata)?.uid,
    }));
}

/**
 * The class's own oracles, on the schedule's audit records (its namespace) and final state:
 * job-after-delete (a Job created for the old uid after the server answered its delete: the
 * audit log's delete, else the runner's time) and old-job-taken (the new Echo's status, sampled or
 * final, naming a Job created for the old uid and never for the new one).
 */
export function recreateViolations(records: readonly AuditRecordWithObjects[], e: RecreateEffect, state: FinalState): Violation[] {
  const out: Violation[] = [];
  const deleted =
    records.find((r) => r.resource === 'echos' && !r.subresource && r.verb === 'delete' && r.name === RECREATED_ECHO && r.code < 300)
      ?.done ?? e.deletedAt;
  const creates = jobCreates(records);
  const late = creates.filter((c) => c.ownerUid === e.oldUid && c.at > deleted);
  if (late.length)
    out.push({
      invariant: 'job-after-delete',
      detail:
        `Echo ${RECREATED_ECHO} (uid ${e.oldUid}) was deleted at ${iso(deleted)}, then ${late.length} Job(s) created for it: ` +
        late.map((c) => `${c.name} received ${iso(c.at)} from ${c.replica ? `replica ${c.replica}` : 'a non-replica'}`).join('; '),
    });
  const finalNew = state.echos.find((x: Echo) => x.metadata.name === RECREATED_ECHO && x.metadata.uid === e.newUid);
  const named = new Set([...e.statusJobNames, ...(finalNew?.status?.jobName ? [finalNew.status.jobName] : [])]);
  const oldJobs = new Set(creates.filter((c) => c.ownerUid === e.oldUid).map((c) => c.name));
  const newJobs = new Set(creates.filter((c) => c.ownerUid === e.newUid).map((c) => c.name));
  const taken = [...named].filter((n) => oldJobs.has(n) && !newJobs.has(n));
  if (taken.length)
    out.push({
      invariant: 'old-job-taken',
      detail: `the re-created Echo ${RECREATED_ECHO} (uid ${e.newUid}) named in its status the Job(s) ${taken.join(', ')}, created for the deleted uid ${e.oldUid}`,
    });
  return out;
}
