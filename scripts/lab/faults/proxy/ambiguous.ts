/**
 * The ambiguous class's half in the fault proxy (classes/ambiguous.ts says what the class is): the
 * server's 2xx answer to a selected write is replaced, so the replica cannot tell that the write
 * was committed: the connection reset, or a 500/503 Status with Retry-After (as a storm answers,
 * proxy/status.ts).
 *
 * Guarantees: only writes the server answered 2xx are hidden, `count` of them at most, after
 * `skip` such writes passed on; each hidden one is recorded, with the status the server gave.
 */
import type { ServerResponse } from 'node:http';
import type { AnswerFate } from './exchange.js';
import type { RequestPick } from './late.js';
import { answerStorm } from './status.js';

export type HiddenAs = 'reset' | 500 | 503;

export interface HiddenOutcome {
  verb: string;
  path: string;
  status: number;
  as: HiddenAs;
}

export class HiddenOutcomes {
  private plan: { pick: RequestPick; skip: number; count: number; as: HiddenAs } | undefined;
  readonly hidden: HiddenOutcome[] = [];

  /** Hides the outcome of the `count` next committed writes `pick` selects, after `skip` of them. */
  hideNext(pick: RequestPick, opts: { skip: number; count: number; as: HiddenAs }): void {
    this.plan = { pick, ...opts };
  }

  /** The proxy's hook on every answer. */
  answerFate(method: string, path: string, status: number): AnswerFate {
    const plan = this.plan;
    if (!plan || plan.count <= 0 || status < 200 || status >= 300 || !plan.pick(method, path)) return undefined;
    if (plan.skip > 0) {
      plan.skip--;
      return undefined;
    }
    plan.count--;
    const as = plan.as;
    this.hidden.push({ verb: method, path, status, as });
    return { replace: (res: ServerResponse) => (as === 'reset' ? res.destroy() : answerStorm(res, as, 1)) };
  }
}
