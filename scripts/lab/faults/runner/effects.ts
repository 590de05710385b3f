/**
 * What a schedule's faults did: the proxies' counts summed over the replicas (proxy/types.ts
 * ProxyEffects), the write a kill followed, and a stale standby's lag when it took the Lease.
 * A schedule whose faults had no effect tested nothing: the report shows it and leaves it out of
 * the denominators (hadEffect).
 *
 * Pure: every function here is a function of its arguments.
 */
import { noEffects, type ProxyEffects, type ProxyWrite } from '../proxy/types.js';
import type { FaultClass } from '../schedules.js';
import { ambiguousHadEffect, ambiguousSummary, type AmbiguousEffects } from '../classes/ambiguous.js';
import { lateHadEffect, lateSummary, type LateEffects } from '../classes/late.js';
import { refusalHadEffect, refusalSummary, type RefusalEffects } from '../classes/refusal.js';
import { recreateHadEffect, recreateSummary, type RecreateEffect } from '../classes/recreate.js';
import { ttlHadEffect, ttlSummary, type TtlEffect } from '../classes/ttl.js';
import { staleApiserverHadEffect, staleApiserverSummary, type StaleApiserverEffect } from '../classes/stale-apiserver.js';

export interface KilledAfter {
  /** The k of the counted write. */
  seq: number;
  verb: string;
  /** `<resource>[/<subresource>]`, e.g. jobs, echos/status. */
  resource: string;
  name?: string;
  status: number;
  /** Which step of a reconciler makes such a write (writeSite). */
  site: string;
}

export interface Takeover {
  /** Watch events the standby's proxy still held back when it took the Lease, and the oldest one's age (ms). */
  behindEvents: number;
  behindMs: number;
  /** Events it got late while it led (from its takeover for as long as its lag). */
  delayedWhileLeading: number;
}

/** What the faults did that only the runner sees (the proxies count the rest). */
export interface RunnerEffects {
  killedAfter?: KilledAfter;
  takeover?: Takeover;
  /** The replicas running when kube-apiserver was killed: every connection they had died. */
  restartedUnder?: string[];
  late?: LateEffects;
  ambiguous?: AmbiguousEffects;
  refusal?: RefusalEffects;
  recreate?: RecreateEffect;
  ttl?: TtlEffect;
  staleApiserver?: StaleApiserverEffect;
}

export interface ScheduleEffects extends ProxyEffects, RunnerEffects {}

export function sumEffects(parts: readonly ProxyEffects[]): ProxyEffects {
  const out = noEffects();
  for (const p of parts) for (const k of Object.keys(out) as (keyof ProxyEffects)[]) out[k] += p[k];
  return out;
}

const WRITE_PATH = /^\/apis?\/(?:[^/]+\/)?[^/]+\/namespaces\/[^/]+\/([^/]+)(?:\/([^/]+))?(?:\/([^/]+))?$/;

/** A counted write as the report names it: verb, resource (with subresource), name, and the reconciler step that makes it. */
export function killedAfter(w: ProxyWrite): KilledAfter {
  const m = WRITE_PATH.exec(w.path);
  const resource = m ? `${m[1]}${m[3] ? `/${m[3]}` : ''}` : w.path;
  return { seq: w.seq, verb: w.verb, resource, ...(m?.[2] ? { name: m[2] } : {}), status: w.status, site: writeSite(w.verb, resource) };
}

/**
 * Where in a reconciler a write of this verb and resource comes from: the same for every program,
 * since each writes the same objects for the same reasons (the claim or record of a run in an
 * Echo's status, the run's Job, a previous message's Job deleted, the CronJob made or corrected).
 */
export function writeSite(verb: string, resource: string): string {
  const create = verb === 'POST';
  const update = verb === 'PUT' || verb === 'PATCH';
  if (resource === 'jobs' && create) return "the run's Job create";
  if (resource === 'jobs' && verb === 'DELETE') return "a previous run's Job delete";
  if (resource === 'echos/status' && update) return "the Echo's status write (claim or record of a run)";
  if (resource === 'cronjobs' && create) return 'the CronJob create';
  if (resource === 'cronjobs' && update) return 'the CronJob correction';
  if (resource === 'cronjobs' && verb === 'DELETE') return 'a CronJob delete';
  if (resource === 'scheduledechos/status' && update) return "the ScheduledEcho's status write";
  if (resource.endsWith('/finalizers') || ((resource === 'echos' || resource === 'scheduledechos') && update))
    return 'a finalizer or metadata write';
  return `${verb} ${resource}`;
}

/**
 * Whether the schedule's faults reached the program: a kill after a write; a takeover from a view
 * that lagged (events still held back, or delayed while it led); events dropped or merged, or a
 * 410; connections cut, or a 410 from the server, across a restart or a compaction (a watch
 * the proxy reset is the cause, not the effect: it counts when it met a 410); requests held by a partition;
 * requests refused by a storm; for the late, ambiguous and refusal classes, their own files
 * (classes/) say.
 */
export function hadEffect(c: FaultClass, e: ScheduleEffects): boolean {
  switch (c) {
    case 'intermediate':
      return e.killedAfter !== undefined;
    case 'stale':
      return e.takeover !== undefined && (e.takeover.behindEvents > 0 || e.takeover.delayedWhileLeading > 0);
    case 'unobserved':
      return e.eventsDropped + e.eventsMerged + e.expiredByProxy > 0;
    case 'restart':
      return (e.restartedUnder?.length ?? 0) + e.cut + e.expiredByServer > 0;
    case 'partition':
      return e.held > 0;
    case 'overload':
      return e.refused > 0;
    case 'late':
      return lateHadEffect(e.late);
    case 'ambiguous':
      return ambiguousHadEffect(e.ambiguous);
    case 'refusal':
      return refusalHadEffect(e.refusal);
    case 'recreate':
      return recreateHadEffect(e.recreate);
    case 'ttl':
      return ttlHadEffect(e.ttl);
    case 'stale-apiserver':
      return staleApiserverHadEffect(e.staleApiserver);
    case 'generated':
      // A sequence without a mixed fault: its user operations are what it tests (with one, the
      // mixed fault's class decides, see report.ts effective).
      return true;
  }
}

/** One line: the counts that are not zero, the kill's write, the takeover's lag. */
export function effectSummary(e: ScheduleEffects): string {
  const parts: string[] = [];
  const count = (n: number, what: string): void => {
    if (n > 0) parts.push(`${n} ${what}`);
  };
  count(e.eventsDropped, 'events dropped');
  count(e.eventsMerged, 'merged');
  count(e.eventsDelayed, 'delayed');
  count(e.expiredByProxy, '410s sent by the proxy');
  count(e.expiredByServer, '410s from the server');
  count(e.refused, 'requests refused');
  count(e.held, 'held');
  count(e.cut, 'cut by the server');
  count(e.watchesReset, 'watches reset by the proxy');
  if (e.killedAfter) {
    const k = e.killedAfter;
    parts.push(`killed after write ${k.seq}: ${k.verb} ${k.resource}${k.name ? ` ${k.name}` : ''} -> ${k.status} (${k.site})`);
  }
  if (e.restartedUnder?.length) parts.push(`kube-apiserver restarted under ${e.restartedUnder.join(', ')}`);
  if (e.takeover)
    parts.push(
      `took over ${e.takeover.behindEvents} event(s) behind (oldest ${e.takeover.behindMs} ms), ${e.takeover.delayedWhileLeading} delayed while leading`,
    );
  for (const line of [lateSummary(e.late), ambiguousSummary(e.ambiguous), refusalSummary(e.refusal)]) if (line) parts.push(line);
  if (e.recreate) parts.push(recreateSummary(e.recreate));
  if (e.ttl) parts.push(ttlSummary(e.ttl));
  if (e.staleApiserver) parts.push(staleApiserverSummary(e.staleApiserver));
  return parts.join(', ') || 'no effect';
}
