/**
 * The refusal class: from before the workload's first write until `windowMs` after it, the server
 * refuses every Job create in the schedule's namespace, by a ValidatingAdmissionPolicy and its binding (admissionregistration.k8s.io/v1,
 * 422 Invalid), by a ResourceQuota of zero `count/jobs.batch` (403 Forbidden, exceeded quota), or
 * both; then the refusal is lifted. Oracles: no run repeated, the state converges once it is
 * lifted, no status stuck.
 *
 * Pure: refusalFaults() is a function of its random source; the effect functions of their arguments.
 */
import { intBetween, pick } from '../random.js';
import { writeResource } from './targets.js';

export const REFUSERS = ['policy', 'quota', 'both'] as const;
export type Refuser = (typeof REFUSERS)[number];

export interface RefusalFaults {
  class: 'refusal';
  by: Refuser;
  windowMs: number;
}

export function refusalFaults(random: () => number): RefusalFaults {
  return { class: 'refusal', by: pick(random, REFUSERS), windowMs: intBetween(random, 2000, 8000) };
}

export interface RefusalEffects {
  /** How long the refusal was in force (from the server's refusal of a probe, or the quota's status, to the lift), ms. */
  inForceMs: number;
  /** The replicas' Job creates the server refused, per status (403 quota, 422 policy). */
  refused: Record<string, number>;
  /** Echos whose status conditions named the refusal just before it was lifted (the program reported it). */
  reportedBy?: string[];
  /** Echos whose status still named it STUCK_AFTER_MS after the lift. */
  stuck?: string[];
}

/** How long after the lift a status may still report the refusal. */
export const STUCK_AFTER_MS = 20_000;

/** Whether a condition's message is the server's refusal of this class (the policy's or the quota's words). */
export const namesRefusal = (message: string | undefined): boolean =>
  message !== undefined && (message.includes(REFUSAL_MESSAGE) || message.includes(`exceeded quota: ${REFUSAL_QUOTA}`));

/** The policy's message, and the quota's name, as the server quotes them in its refusals. */
export const REFUSAL_MESSAGE = 'Job creates are refused for a while (the fault campaign: refusal class)';
export const REFUSAL_QUOTA = 'faults-refusal';

/** A status that still reports a lifted refusal is stuck: a status-converges violation. */
export function refusalViolations(e: RefusalEffects | undefined): { invariant: 'status-converges'; detail: string }[] {
  return (e?.stuck ?? []).map((echo) => ({
    invariant: 'status-converges' as const,
    detail: `Echo ${echo}: its status still reports the refused Job create ${STUCK_AFTER_MS} ms after the refusal was lifted`,
  }));
}

export function refusalHadEffect(e: RefusalEffects | undefined): boolean {
  return Object.values(e?.refused ?? {}).some((n) => n > 0);
}

export function refusalSummary(e: RefusalEffects | undefined): string | undefined {
  if (!e) return undefined;
  const refused = Object.entries(e.refused)
    .filter(([, n]) => n > 0)
    .map(([code, n]) => `${n} x ${code}`)
    .join(', ');
  const reported = e.reportedBy?.length ? `; reported in the status of ${e.reportedBy.join(', ')}` : '';
  return `Job creates refused for ${e.inForceMs} ms: ${refused || 'none made meanwhile'}${reported}`;
}

/** The Job creates among `writes` (a replica's, as its proxy counted them) that the server refused with 403 or 422. */
export function refusedCreates(writes: readonly { verb: string; path: string; status: number }[]): Record<string, number> {
  const out: Record<string, number> = {};
  for (const w of writes)
    if (w.verb === 'POST' && writeResource(w.path).resource === 'jobs' && (w.status === 403 || w.status === 422))
      out[w.status] = (out[w.status] ?? 0) + 1;
  return out;
}
