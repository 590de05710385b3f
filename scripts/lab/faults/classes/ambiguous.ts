/**
 * The ambiguous class: the server commits a write, then the replica never learns it did. Its
 * proxy passes the write on and, for the `count` writes of the target that the server answered
 * 2xx (after `skip` of them), replaces the answer: the connection reset, or a 500/503 Status with
 * Retry-After. A replica must not repeat a run it cannot tell happened (one Job per Echo
 * generation), and must converge.
 *
 * Pure: ambiguousFaults() is a function of its random source; the effect functions of their arguments.
 */
import { intBetween, pick } from '../random.js';
import { perVerbResource, WRITE_TARGETS, type WriteTarget } from './targets.js';

export const HIDDEN_ANSWERS = ['reset', 500, 503] as const;
export type HiddenAnswer = (typeof HIDDEN_ANSWERS)[number];

export interface AmbiguousFaults {
  class: 'ambiguous';
  target: WriteTarget;
  skip: number;
  count: number;
  answer: HiddenAnswer;
}

export function ambiguousFaults(random: () => number): AmbiguousFaults {
  return {
    class: 'ambiguous',
    target: pick(random, WRITE_TARGETS),
    skip: intBetween(random, 0, 2),
    count: intBetween(random, 1, 3),
    answer: pick(random, HIDDEN_ANSWERS),
  };
}

/** A committed write whose answer the replica got instead of the server's. */
export interface HiddenWrite {
  verb: string;
  resource: string;
  name?: string;
  /** The server's answer, which the replica never saw. */
  status: number;
  answer: HiddenAnswer;
}

export interface AmbiguousEffects {
  hidden: HiddenWrite[];
}

export function ambiguousHadEffect(e: AmbiguousEffects | undefined): boolean {
  return (e?.hidden.length ?? 0) > 0;
}

export function ambiguousSummary(e: AmbiguousEffects | undefined): string | undefined {
  if (!e?.hidden.length) return undefined;
  const answers = [...new Set(e.hidden.map((h) => String(h.answer)))].join('/');
  return `outcome hidden (${answers}) of ${perVerbResource(e.hidden)}`;
}
