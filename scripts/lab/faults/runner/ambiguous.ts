/**
 * Plays the ambiguous class (classes/ambiguous.ts): before the workload, the replica's proxy is
 * told which committed writes to hide the outcome of; the effects are its record of them, read
 * when the schedule's effects are (a live view: hidden outcomes during quiescence count too).
 */
import { isTargetWrite, writeResource } from '../classes/targets.js';
import type { AmbiguousEffects, AmbiguousFaults } from '../classes/ambiguous.js';
import type { FaultRun } from './context.js';
import type { Replica } from './replicas.js';

/** The schedule being played, as this class's code sees it. */
type FaultContext = FaultRun<{ ambiguous?: AmbiguousEffects }>;

export function armAmbiguous(ctx: FaultContext, first: Replica): void {
  const f = ctx.faults as AmbiguousFaults;
  const outcomes = first.proxy.ambiguous;
  outcomes.hideNext((method, path) => isTargetWrite(f.target, method, path), { skip: f.skip, count: f.count, as: f.answer });
  ctx.effects.ambiguous = {
    get hidden() {
      return outcomes.hidden.map((h) => ({ verb: h.verb, ...writeResource(h.path), status: h.status, answer: h.as }));
    },
  };
}
