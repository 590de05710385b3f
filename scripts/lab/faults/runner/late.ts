/**
 * Plays the late class (classes/late.ts) on a schedule's replicas: r0 leads, r1 stands by.
 *
 *  - old-term: before the workload, r0's proxy is told to hold its next write of the target; once
 *    it holds one, r0 is partitioned (its proxy silent) and, in 'killed', SIGKILLed; when r1 has
 *    taken the Lease and `deliverAfterTakeoverMs` passed, the held write is delivered, then the
 *    partition ends. Whether the server received it after r0's term ended (another replica had
 *    acquired the Lease by then) is read from the audit log, by the Audit-ID the proxy gave it.
 *  - slow-answer: at its time, every replica's proxy holds the answers to the target's requests
 *    for the window.
 *
 * Guarantees: play resolves once the held write was delivered (or the fault was skipped: no such
 * write within HOLD_TIMEOUT_MS, no takeover) and the partition ended; skipped faults are notes.
 */
import { join } from 'node:path';
import { eventually } from '../../../testbed/eventually.js';
import { sleep } from '../../bench/log.js';
import { auditOffset, readAudit } from '../judge/audit.js';
import { isTargetWrite, writeResource } from '../classes/targets.js';
import type { LateEffects, LateFaults } from '../classes/late.js';
import { isCountedWrite, isLeaseWrite } from '../proxy/writes.js';
import type { HeldWrite } from '../proxy/late.js';
import type { FaultRun } from './context.js';
import type { Replica } from './replicas.js';

/** The schedule being played, as this class's code sees it. */
type FaultContext = FaultRun<{ late?: LateEffects }>;

/** How long r0 has to make the write to hold. */
const HOLD_TIMEOUT_MS = 20_000;
/** How long r1 has to take the Lease once r0 is cut off. */
const TAKEOVER_TIMEOUT_MS = 30_000;

const armed = new WeakMap<FaultContext, { held: Promise<HeldWrite>; auditFrom: number }>();

const auditPath = (ctx: FaultContext): string => join(ctx.state.dir, 'logs', 'audit.log');

/** old-term: r0's proxy holds the write before the workload's first write. */
export function armLate(ctx: FaultContext, first: Replica): void {
  const f = ctx.faults as LateFaults;
  if (f.mode !== 'old-term') return;
  const pick = (method: string, path: string): boolean => isTargetWrite(f.target, method, path);
  armed.set(ctx, { held: first.proxy.late.holdNext(pick, f.skip), auditFrom: auditOffset(auditPath(ctx)) });
}

export async function playLate(ctx: FaultContext, t0: number, skipped: (why: string) => void): Promise<void> {
  const f = ctx.faults as LateFaults;
  const effects: LateEffects = { writes: [] };
  ctx.effects.late = effects;
  if (f.mode === 'slow-answer') {
    await sleep(t0 + f.atMs - Date.now());
    const from = Date.now();
    const pick = f.target === 'lease' ? isLeaseWrite : (method: string, path: string): boolean => isCountedWrite(method, path);
    const replicas = ctx.replicas.running();
    for (const r of replicas) r.proxy.late.slowDown(pick, f.holdMs, f.windowMs);
    await sleep(f.windowMs + f.holdMs);
    // What the proxies held, read once every held answer was due.
    for (const r of replicas)
      for (const a of r.proxy.late.slowAnswers)
        effects.writes.push({
          replica: r.name,
          held: 'answer',
          verb: a.verb,
          ...writeResource(a.path),
          status: a.status,
          heldMs: a.heldMs,
        });
    ctx.timeline.push({ kind: 'fault', from, to: from + f.windowMs, label: `${f.target} answers ${f.holdMs} ms late` });
    return;
  }
  const arm = armed.get(ctx);
  const [leader, standby] = ctx.replicas.all;
  if (!arm || !leader || !standby) return skipped('no leader and standby to play the late write between');
  const held = await Promise.race([arm.held, sleep(HOLD_TIMEOUT_MS).then(() => undefined)]);
  if (!held) {
    leader.proxy.late.close();
    return skipped(`${leader.name} made no ${f.target} write (after ${f.skip}) within ${HOLD_TIMEOUT_MS} ms`);
  }
  const from = Date.now();
  leader.proxy.silence();
  if (f.ending === 'killed') ctx.replicas.kill(leader, 'SIGKILL');
  const tookOver = await ctx.replicas.holdsLease(standby, TAKEOVER_TIMEOUT_MS);
  if (tookOver) await sleep(f.deliverAfterTakeoverMs);
  else ctx.notes.push(`${standby.name} did not take the Lease within ${TAKEOVER_TIMEOUT_MS} ms: the held write is delivered anyway`);
  const { status, auditID, deliveredAt } = await held.deliver();
  leader.proxy.restore();
  ctx.timeline.push({
    kind: 'fault',
    replica: leader.name,
    from,
    to: Date.now(),
    label: `${held.verb} held ${deliveredAt - held.heldAt} ms, ${f.ending}`,
  });
  effects.writes.push({
    replica: leader.name,
    held: 'request',
    verb: held.verb,
    ...writeResource(held.path),
    status,
    heldMs: deliveredAt - held.heldAt,
    auditID,
    ...(await afterTermEnded(ctx, arm.auditFrom, auditID, leader.name)),
  });
}

/** Whether the server received the write after another replica had taken the Lease (the audit log's word); {} when the log lacks it. */
async function afterTermEnded(
  ctx: FaultContext,
  auditFrom: number,
  auditID: string,
  replica: string,
): Promise<{ afterTermEnded?: boolean }> {
  const records = await eventually(
    'the late write in the audit log',
    () => {
      const all = readAudit(auditPath(ctx), auditFrom);
      return all.some((r) => r.auditID === auditID) ? all : undefined;
    },
    5000,
    200,
  ).catch(() => undefined);
  const write = records?.find((r) => r.auditID === auditID);
  if (!records || !write) return {};
  const taken = records.some(
    (r) =>
      r.resource === 'leases' &&
      r.namespace === ctx.namespace &&
      r.replica !== undefined &&
      r.replica !== replica &&
      r.code >= 200 &&
      r.code < 300 &&
      r.at <= write.at,
  );
  return { afterTermEnded: taken };
}
