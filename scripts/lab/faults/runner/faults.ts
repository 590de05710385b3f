/**
 * Plays a schedule's faults on its replicas and the control plane, at the schedule's times (ms
 * after the workload's first write), and records each as a span for the timeline.
 *
 *  - intermediate: SIGKILL the replica inside its proxy's onWrite for the k-th counted write (the
 *    server has answered, the replica has not seen the answer); the replica set starts a fresh one.
 *  - stale: the standby's object watches (not its Lease's), or its Echo watches alone, lag by d
 *    from its start (armed before the standby starts, in prepareStandby); the leader is SIGKILLed
 *    at its time (with the Echo watches alone, that long after the first run the program
 *    finished: what it recorded of the run is then only in the leader's cache); the standby takes
 *    the Lease with a cache up to d old.
 *  - unobserved: drop up to N events (of one kind, or any) or merge MODIFIED events from the
 *    start until its time, then end every watch with a 410 (and refuse the next ones): the replica
 *    must re-list.
 *  - restart: at its time, etcd compacted at its current revision and every replica's watch
 *    connections reset (each resumes from its resourceVersion: a 410 for the Job and CronJob
 *    watches, which the campaign's kube-apiserver serves from etcd), and/or kube-apiserver
 *    killed (SIGKILL) and started again.
 *  - partition: the leader's proxy goes silent at its time, for longer than a lease duration, then
 *    comes back (its connections die); the standby takes over meanwhile.
 *  - overload: every replica's proxy refuses a fraction of requests with 429 or 503 and
 *    Retry-After, for the storm's length.
 *  - late, ambiguous, refusal: runner/late.ts, runner/ambiguous.ts, runner/refusal.ts.
 *  - recreate, ttl: classes/recreate.ts and classes/ttl.ts (an Echo of their own re-created
 *    across a failover; a finished run's Job removed before the replica saw it finish).
 *
 * Guarantees: play() resolves when every fault has ended (a silence restored, a storm over, the
 * API server ready again); a fault whose target is gone (a replica that already exited) is
 * recorded as skipped, never thrown.
 */
import type { V1Job } from '@kubernetes/client-node';
import { ECHOS, type Echo } from '../../../../src/api/echo.js';
import { JOBS, resourcePath } from '../../../../src/kube/resources.js';
import { killApiserver, restartApiserver } from '../../../testbed/controlplane/cluster.js';
import { eventually } from '../../../testbed/eventually.js';
import { sleep } from '../../bench/log.js';
import { deriveSeed, mulberry32 } from '../random.js';
import { compactEtcd } from './controlplane.js';
import type { Replica } from './replicas.js';
import type { FaultProxy } from '../proxy/proxy.js';
import type { Faults } from '../schedules.js';
import { finishedJobOf } from '../workloads.js';
import { killedAfter, type RunnerEffects } from './effects.js';
import { armAmbiguous } from './ambiguous.js';
import { armLate, playLate } from './late.js';
import { armRefusal, playRefusal } from './refusal.js';
import { ECHO_WATCHES, playRecreate, recreateViolations } from '../classes/recreate.js';
import { playTtl } from '../classes/ttl.js';
import { playStaleApiserver } from '../classes/stale-apiserver.js';
import type { FaultRun } from './context.js';
import type { AuditRecordWithObjects } from '../judge/audit.js';
import type { FinalState, Violation } from '../judge/types.js';

/** The watches whose events the stale class holds back: the objects, not the Lease; or the Echos alone. */
const LAGGING_WATCHES = { objects: /\/(echos|scheduledechos|jobs|cronjobs)$/, echos: /\/echos$/ } as const;
/** How long the stale class waits for the standby to take the Lease once the leader is killed. */
const TAKEOVER_TIMEOUT_MS = 30_000;
/** How long the stale class waits for a finished run before it kills the leader anyway. */
const FINISHED_RUN_TIMEOUT_MS = 20_000;

/** A schedule being played, as the runner hands it to every class: all their effects, its faults. */
export interface FaultContext extends FaultRun<RunnerEffects> {
  faults: Faults;
}

/** Arms what must be in place before the standby (r1) starts. */
export function prepareStandby(faults: Faults): ((proxy: FaultProxy) => void) | undefined {
  if (faults.class === 'recreate') return (proxy) => proxy.delayWatches(faults.watchDelayMs, ECHO_WATCHES);
  if (faults.class !== 'stale') return undefined;
  return (proxy) => proxy.delayWatches(faults.watchDelayMs, LAGGING_WATCHES[faults.lagging]);
}

/** Arms what must be in place before the workload's first write (on the first replica). */
export async function armBeforeWorkload(ctx: FaultContext, first: Replica): Promise<void> {
  const f = ctx.faults;
  if (f.class === 'late') return armLate(ctx, first);
  if (f.class === 'ambiguous') return armAmbiguous(ctx, first);
  if (f.class === 'refusal') return armRefusal(ctx, (why) => skipped(ctx, why));
  if (f.class !== 'intermediate') return;
  first.proxy.onWrite((w) => {
    if (w.seq !== f.killAfterWrite || first.exit) return;
    ctx.replicas.kill(first, 'SIGKILL');
    ctx.effects.killedAfter = killedAfter(w);
    ctx.timeline.push({ kind: 'fault', replica: first.name, from: w.at, to: w.at, label: `SIGKILL after write ${w.seq}` });
  });
}

/** Plays the timed faults; t0 is Date.now() at the workload's first write. */
export async function play(ctx: FaultContext, t0: number): Promise<void> {
  const f = ctx.faults;
  const at = (ms: number): Promise<void> => sleep(t0 + ms - Date.now());
  const span = (label: string, from: number, replica?: string): void => {
    ctx.timeline.push({ kind: 'fault', ...(replica ? { replica } : {}), from, to: Date.now(), label });
  };
  switch (f.class) {
    case 'intermediate':
      return;
    case 'stale': {
      const standby = ctx.replicas.all[1];
      if (standby)
        ctx.timeline.push({
          kind: 'fault',
          replica: standby.name,
          from: standby.startedAt,
          to: Date.now(),
          label: `${f.lagging === 'echos' ? 'Echo watches' : 'watches'} ${f.watchDelayMs} ms late`,
        });
      if (f.lagging === 'echos') {
        const finished = await eventually('a finished run', () => anyRunFinished(ctx), FINISHED_RUN_TIMEOUT_MS, 100).then(
          () => true,
          () => false,
        );
        if (!finished) ctx.notes.push(`no run finished within ${FINISHED_RUN_TIMEOUT_MS} ms: the leader is killed anyway`);
        await sleep(f.killLeaderAtMs);
      } else await at(f.killLeaderAtMs);
      const leader = ctx.replicas.leader();
      if (!leader || leader.exit) return skipped(ctx, 'no running leader to kill');
      ctx.replicas.kill(leader, 'SIGKILL');
      span('SIGKILL', Date.now(), leader.name);
      // The schedule is about what the standby does as leader from its lagging view: it must not
      // end (the workload may be done already) before the standby led for as long as its lag.
      if (standby && standby !== leader) {
        const from = Date.now();
        if (!(await ctx.replicas.holdsLease(standby, TAKEOVER_TIMEOUT_MS)))
          return skipped(ctx, `${standby.name} did not take the Lease within ${TAKEOVER_TIMEOUT_MS} ms`);
        const behind = standby.proxy.watchBacklog();
        const delayedBefore = standby.proxy.effects().eventsDelayed;
        await sleep(f.watchDelayMs);
        ctx.effects.takeover = {
          behindEvents: behind.events,
          behindMs: behind.oldestMs,
          delayedWhileLeading: standby.proxy.effects().eventsDelayed - delayedBefore,
        };
        span('leads from a lagging view', from, standby.name);
      }
      return;
    }
    case 'unobserved': {
      const r = ctx.replicas.all[0];
      if (!r) return skipped(ctx, 'no replica');
      const from = Date.now();
      if (f.mode === 'drop') r.proxy.dropWatchEvents(f.drop, f.dropKind ? (e) => e.object.kind === f.dropKind : undefined);
      else r.proxy.mergeWatchEvents(f.mergeMs);
      await at(f.expireAtMs);
      // The faults end where the re-list begins: an event lost after it is one no re-list repairs
      // (client-go's informers would miss it too), which is not the state this class tests.
      if (f.mode === 'merge') r.proxy.mergeWatchEvents(0);
      else r.proxy.dropWatchEvents(0);
      span(f.mode === 'drop' ? `drop ${f.drop} ${f.dropKind ?? 'event'}(s)` : `merge ${f.mergeMs} ms`, from, r.name);
      r.proxy.expireWatches(f.expireNextWatches);
      span(`410 (+${f.expireNextWatches})`, Date.now(), r.name);
      return;
    }
    case 'restart': {
      await at(f.atMs);
      if (f.compact) {
        const from = Date.now();
        const revision = await compactEtcd(ctx.state);
        // A compaction under open watches changes nothing they show (issue 42): a watch resumed
        // from before it is what meets it. Reset them, as a dropped connection would.
        for (const r of ctx.replicas.running()) r.proxy.resetWatches();
        span(`etcd compacted at ${revision}, watches reset`, from);
      }
      if (f.restartApiserver) {
        const from = Date.now();
        // A crash (SIGKILL): a graceful stop waits for open watches to drain, tens of seconds.
        ctx.effects.restartedUnder = ctx.replicas.running().map((r) => r.name);
        await killApiserver(ctx.state, 'SIGKILL');
        await restartApiserver(ctx.state, { log: ctx.log });
        span('kube-apiserver restart', from);
      }
      return;
    }
    case 'partition': {
      await at(f.atMs);
      const leader = ctx.replicas.leader();
      if (!leader || leader.exit) return skipped(ctx, 'no running leader to partition');
      const from = Date.now();
      leader.proxy.silence();
      await sleep(f.silenceMs);
      leader.proxy.restore();
      span('silent', from, leader.name);
      return;
    }
    case 'overload': {
      await at(f.atMs);
      const from = Date.now();
      const random = mulberry32(deriveSeed(ctx.seed, 'storm'));
      for (const r of ctx.replicas.running())
        r.proxy.storm({ status: f.status, retryAfterS: f.retryAfterS, ms: f.ms, fraction: f.fraction, random });
      await sleep(f.ms);
      span(`${f.status} x${f.fraction} (Retry-After ${f.retryAfterS})`, from);
      return;
    }
    case 'late':
      return playLate(ctx, t0, (why) => skipped(ctx, why));
    case 'ambiguous':
      return; // armed before the workload
    case 'refusal':
      return playRefusal(ctx, t0);
    case 'recreate':
      return playRecreate(ctx, f);
    case 'ttl':
      return playTtl(ctx, f);
    case 'stale-apiserver':
      if (!ctx.secondApiserver) throw new Error('the stale-apiserver class needs its second kube-apiserver started first');
      return playStaleApiserver(ctx, f, ctx.secondApiserver, t0);
  }
}

/** The oracles of a class beyond the judge's rules, on the schedule's audit records and final state. */
export function classViolations(ctx: FaultContext, records: readonly AuditRecordWithObjects[], state: FinalState): Violation[] {
  const inNamespace = records.filter((r) => r.namespace === ctx.namespace);
  return ctx.effects.recreate ? recreateViolations(inNamespace, ctx.effects.recreate, state) : [];
}

/** Whether the program finished a run of some Echo (workloads.ts's finishedJobOf). */
async function anyRunFinished(ctx: FaultContext): Promise<boolean> {
  const [echos, jobs] = await Promise.all([
    ctx.rest.request<{ items?: Echo[] }>('GET', resourcePath(ECHOS, ctx.namespace), { timeoutMs: 5000 }),
    ctx.rest.request<{ items?: V1Job[] }>('GET', resourcePath(JOBS, ctx.namespace), { timeoutMs: 5000 }),
  ]);
  return (echos.items ?? []).some((e) => finishedJobOf(e, jobs.items ?? []) !== undefined);
}

function skipped(ctx: FaultContext, why: string): void {
  ctx.notes.push(`fault skipped: ${why}`);
  ctx.log(`fault skipped: ${why}`);
}
