/**
 * Which Echo generation each Job ever created ran, from the audit log alone (deleted Jobs and
 * deleted Echos included), and the rule "at most one Job created per Echo generation".
 *
 * The rule, the same for every program (none is asked to label its Jobs with a generation):
 * - a Job is OF an Echo when its controller owner reference names the Echo's uid (the create's
 *   request body, logged by the control plane's policy; a create logged without a body falls back
 *   to the Job still in the final state, and is left out when that Job is gone too);
 * - the Echo's generations are read from its writes' answers (uid, generation, spec.message at
 *   that write), each starting when the write that made it was received; the final state adds
 *   the current one, for an Echo written before the window;
 * - a Job runs the generation whose message it prints (renderedMessage) and which was the latest
 *   such generation when the create was received. A message can return (A, B, A): the time tells
 *   the two A generations apart. A Job created for an older generation after a newer one began
 *   (a claim, then the user's edit, then the create) counts for the newest generation with its
 *   message, which is the only Job that generation gets unless a second one is made: a stale
 *   leader re-creating a finished run's Job is still two creates of one generation.
 * - Two successful creates (201) of one generation are a violation, whatever their names: names
 *   differ between programs, duplicates are what matters. A Job printing a message its Echo
 *   never had before the create is one too, when the Echo's creation is in the log (else the
 *   history is incomplete and the Job is not judged).
 */
import type { V1Job } from '@kubernetes/client-node';
import type { Echo } from '../../../../src/api/echo.js';
import type { AuditRecordWithObjects } from './audit.js';
import { controllerOf, renderedMessage } from './pod.js';
import { iso, type Violation } from './types.js';

export interface EchoGeneration {
  uid: string;
  namespace: string;
  name: string;
  generation: number;
  message: string;
  /** When the write that made it was received (ms); -Infinity: before the log's window. */
  since: number;
}

export interface JobRun {
  namespace: string;
  name: string;
  /** When the create was received (ms). */
  at: number;
  replica?: string;
  userAgent: string;
  ownerUid: string;
  ownerName: string;
  message: string | undefined;
  /** The Echo generation it ran; undefined when none had its message before the create. */
  generation: number | undefined;
}

/** An Echo with the identity the rule reads (uid and generation); `kind` is checked on a logged answer (a delete's may be a Status). */
function isEcho(obj: unknown, kindKnown = false): obj is Echo {
  const e = obj as Partial<Echo> | undefined;
  return (kindKnown || e?.kind === 'Echo') && typeof e?.metadata?.uid === 'string' && typeof e.metadata.generation === 'number';
}

/** Each Echo's generations by uid, oldest first. */
export function echoGenerations(records: readonly AuditRecordWithObjects[], echos: readonly Echo[]): Map<string, EchoGeneration[]> {
  const byUid = new Map<string, EchoGeneration[]>();
  const add = (echo: Echo, since: number): void => {
    const uid = echo.metadata.uid!;
    const list = byUid.get(uid) ?? [];
    if (list.some((g) => g.generation === echo.metadata.generation)) return;
    list.push({
      uid,
      namespace: echo.metadata.namespace ?? '',
      name: echo.metadata.name ?? '',
      generation: echo.metadata.generation!,
      message: echo.spec?.message ?? '',
      since,
    });
    byUid.set(uid, list);
  };
  for (const r of records) {
    if (r.resource === 'echos' && !r.subresource && r.code < 300 && isEcho(r.responseObject)) add(r.responseObject, r.at);
  }
  for (const echo of echos) if (isEcho(echo, true)) add(echo, -Infinity);
  for (const list of byUid.values()) list.sort((a, b) => a.generation - b.generation);
  return byUid;
}

/** Every Job an Echo's controller reference owns, created (201) in the log, with the generation it ran. */
export function jobRuns(
  records: readonly AuditRecordWithObjects[],
  finalJobs: readonly V1Job[],
  generations: ReadonlyMap<string, readonly EchoGeneration[]>,
): JobRun[] {
  const alive = new Map(finalJobs.map((j) => [`${j.metadata?.namespace}/${j.metadata?.name}`, j]));
  const runs: JobRun[] = [];
  for (const r of records) {
    if (r.resource !== 'jobs' || r.verb !== 'create' || r.code !== 201 || !r.name) continue;
    const body = (r.requestObject as V1Job | undefined)?.metadata ? (r.requestObject as V1Job) : alive.get(`${r.namespace}/${r.name}`);
    const owner = controllerOf(body?.metadata);
    if (!owner || owner.kind !== 'Echo') continue;
    const message = renderedMessage(body?.spec?.template?.spec);
    const run: JobRun = {
      namespace: r.namespace ?? '',
      name: r.name,
      at: r.at,
      userAgent: r.userAgent,
      ownerUid: owner.uid,
      ownerName: owner.name,
      message,
      generation: generationRun(generations.get(owner.uid) ?? [], message, r.at),
    };
    if (r.replica !== undefined) run.replica = r.replica;
    runs.push(run);
  }
  return runs;
}

/** The latest generation printing `message` that had begun when the create was received at `at`. */
export function generationRun(history: readonly EchoGeneration[], message: string | undefined, at: number): number | undefined {
  let found: number | undefined;
  for (const g of history) if (g.message === message && g.since <= at) found = g.generation;
  return found;
}

export function oneJobPerGeneration(runs: readonly JobRun[], generations: ReadonlyMap<string, readonly EchoGeneration[]>): Violation[] {
  const violations: Violation[] = [];
  const byGeneration = new Map<string, JobRun[]>();
  for (const run of runs) {
    if (run.generation === undefined) {
      // Judged only when the Echo's whole history is in the log (its creation included).
      const history = generations.get(run.ownerUid) ?? [];
      if (!history.some((g) => g.generation === 1 && Number.isFinite(g.since))) continue;
      violations.push({
        invariant: 'one-job-per-generation',
        detail:
          `Job ${run.namespace}/${run.name} of Echo ${run.ownerName} (uid ${run.ownerUid}) prints ${quote(run.message)}, ` +
          `which no generation of the Echo had when the create was received at ${iso(run.at)} (${writer(run)}); ` +
          `its messages: ${history.map((g) => `${g.generation}=${quote(g.message)}`).join(', ')}`,
      });
      continue;
    }
    const key = `${run.ownerUid}/${run.generation}`;
    byGeneration.set(key, [...(byGeneration.get(key) ?? []), run]);
  }
  for (const group of byGeneration.values()) {
    if (group.length < 2) continue;
    const first = group[0]!;
    violations.push({
      invariant: 'one-job-per-generation',
      detail:
        `Echo ${first.namespace}/${first.ownerName} (uid ${first.ownerUid}) generation ${first.generation} ` +
        `(message ${quote(first.message)}) got ${group.length} Jobs: ` +
        group.map((r) => `${r.name} created ${iso(r.at)} by ${writer(r)}`).join('; '),
    });
  }
  return violations;
}

function writer(run: JobRun): string {
  return run.replica ? `replica ${run.replica}` : `"${run.userAgent}"`;
}

/** A message as the details show it: JSON-quoted, at most 80 characters. */
export function quote(message: string | undefined): string {
  if (message === undefined) return '(none)';
  const q = JSON.stringify(message);
  return q.length > 80 ? `${q.slice(0, 77)}..."` : q;
}
