/**
 * The pure oracles of the generated class, beyond the judge's (which decides the rest: the state
 * converges to the spec, one Job per Echo generation from the audit log, every status within the
 * bound):
 *  - refusedEdit: an edit the CRD refuses is answered 422 Invalid with a message naming the
 *    field, and changes nothing (the object's generation and spec are as before);
 *  - restored: what the program made for one ScheduledEcho matches its spec again after a hand
 *    edit or delete of its CronJob (the judge's state rules, for that object alone).
 *
 * Violations say what the API server answered and what changed, as the judge's do.
 */
import type { ApiError } from '../../../../src/kube/errors.js';
import { scheduledEchoViolations } from '../judge/state.js';
import type { FinalState, Violation } from '../judge/types.js';
import type { RefusedOp } from './sequence.js';

/** What the API server answered to the edit: nothing (it took it), or its error. */
export type EditAnswer = { accepted: true } | { accepted: false; error: Pick<ApiError, 'code' | 'message'> };

export interface Snapshot {
  metadata: { generation?: number };
  spec: unknown;
}

const shownValue = (v: string): string => (v.length > 40 ? `${JSON.stringify(v.slice(0, 30))}… (${v.length} chars)` : JSON.stringify(v));

/** The violation of an edit the CRD should have refused; undefined when refused as it should be. */
export function refusedEdit(op: RefusedOp, answer: EditAnswer, before: Snapshot, after: Snapshot): Violation | undefined {
  const kind = op.op === 'refused-echo' ? 'Echo' : 'ScheduledEcho';
  const what = `${kind} ${op.name}: the edit ${op.field} = ${shownValue(op.value)}`;
  const problems: string[] = [];
  if (answer.accepted) problems.push('was accepted');
  else if (answer.error.code !== 422 || !answer.error.message.includes(op.field))
    problems.push(`was answered ${answer.error.code} "${answer.error.message.slice(0, 200)}", not 422 naming ${op.field}`);
  if (before.metadata.generation !== after.metadata.generation || JSON.stringify(before.spec) !== JSON.stringify(after.spec))
    problems.push(
      `changed the object: generation ${before.metadata.generation} -> ${after.metadata.generation}, spec ${JSON.stringify(before.spec).slice(0, 120)} -> ${JSON.stringify(after.spec).slice(0, 120)}`,
    );
  return problems.length ? { invariant: 'edit-refused', detail: `${what} ${problems.join('; ')}` } : undefined;
}

/** Whether one ScheduledEcho's CronJob and status match its spec (the judge's rules, for it alone). */
export function restored(state: FinalState, name: string): boolean {
  const mine = state.scheduledEchos.filter((s) => s.metadata.name === name);
  return scheduledEchoViolations({ ...state, scheduledEchos: mine }).length === 0;
}
