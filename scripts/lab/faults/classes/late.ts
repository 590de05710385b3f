/**
 * The late class: writes that reach the server late, or whose answers reach the replica late.
 *
 *  - old-term: the leader's proxy holds one of its writes (not a Lease write) without forwarding
 *    it; the leader is then partitioned (and, in 'killed', SIGKILLed), the standby takes the
 *    Lease, and `deliverAfterTakeoverMs` later the held write is delivered to the server: a write
 *    from an ended term arriving late (Sieve; "Who watches the watchers?", NSDI '26). Its answer
 *    never reaches the replica (its connection dies, as the partition's do).
 *  - slow-answer: for `windowMs` from `atMs`, the server applies every write of the target (the
 *    replicas' counted writes, or their Lease renewals) at once, and its answer is passed on
 *    `holdMs` later.
 *
 * A late write delivered after its replica's term ended is the fault itself (Kubernetes' leader
 * election has no fencing): the judge does not count it as a write outside the term
 * (judge/terms.ts); what it did to the objects (a second run, a status that went back) is judged.
 *
 * Pure: lateFaults() is a function of its random source; the effect functions of their arguments.
 */
import { intBetween, pick } from '../random.js';
import { perVerbResource, WRITE_TARGETS, type WriteTarget } from './targets.js';

export type LateFaults =
  | {
      class: 'late';
      mode: 'old-term';
      target: WriteTarget;
      /** Writes of the target passed on before the one held. */
      skip: number;
      ending: 'killed' | 'partitioned';
      deliverAfterTakeoverMs: number;
    }
  | { class: 'late'; mode: 'slow-answer'; target: 'writes' | 'lease'; atMs: number; windowMs: number; holdMs: number };

export function lateFaults(random: () => number): LateFaults {
  if (random() < 0.5)
    return {
      class: 'late',
      mode: 'old-term',
      target: pick(random, WRITE_TARGETS),
      skip: intBetween(random, 0, 1),
      ending: random() < 0.5 ? 'killed' : 'partitioned',
      deliverAfterTakeoverMs: intBetween(random, 0, 3000),
    };
  const target = random() < 0.5 ? 'writes' : 'lease';
  return {
    class: 'late',
    mode: 'slow-answer',
    target,
    // The workloads' runs start within a few hundred ms of the first write: a window for writes
    // that opens later may meet none. Renewals come all along.
    atMs: target === 'writes' ? intBetween(random, 0, 300) : intBetween(random, 0, 1500),
    windowMs: intBetween(random, 1000, 4000),
    // Renewals: below and beyond a renew deadline of a few seconds.
    holdMs: target === 'lease' ? intBetween(random, 1000, 5000) : intBetween(random, 500, 4000),
  };
}

/** One write the class made late: the request held before the server saw it, or the answer after. */
export interface LateWrite {
  replica: string;
  held: 'request' | 'answer';
  verb: string;
  resource: string;
  name?: string;
  /** The server's answer (0: the connection to the server failed). */
  status: number;
  heldMs: number;
  /** old-term: the audit ID the proxy gave the delivered request, and whether the server received it after the replica's term ended. */
  auditID?: string;
  afterTermEnded?: boolean;
}

export interface LateEffects {
  writes: LateWrite[];
}

export function lateHadEffect(e: LateEffects | undefined): boolean {
  return (e?.writes.length ?? 0) > 0;
}

/** The audit IDs of the writes delivered late: the judge's exceptions to "no write outside a term". */
export function deliveredLate(e: LateEffects | undefined): string[] {
  return (e?.writes ?? []).flatMap((w) => (w.auditID ? [w.auditID] : []));
}

export function lateSummary(e: LateEffects | undefined): string | undefined {
  if (!e?.writes.length) return undefined;
  const requests = e.writes.filter((w) => w.held === 'request');
  const answers = e.writes.filter((w) => w.held === 'answer');
  const parts = requests.map(
    (w) =>
      `${w.replica}'s ${w.verb} ${w.resource}${w.name ? ` ${w.name}` : ''} delivered ${w.heldMs} ms late -> ${w.status}` +
      (w.afterTermEnded === undefined ? '' : w.afterTermEnded ? ', after its term ended' : ', within its term'),
  );
  if (answers.length)
    parts.push(`${answers.length} answer(s) held up to ${Math.max(...answers.map((w) => w.heldMs))} ms (${perVerbResource(answers)})`);
  return parts.join('; ');
}
