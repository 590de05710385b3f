/**
 * Lease terms and the rule "no write by a replica outside its lease term", judged from the API
 * server's audit log alone, never from a program's own word.
 *
 * A term starts when a replica's write to the Lease succeeds while the Lease is not its own (the
 * acquire: the first successful write, or one after another replica's, or one after its own term
 * lapsed) and lasts until its last successful renew was answered plus the lease duration, or
 * until another replica's acquire was received, whichever is earlier. A write to the Lease that
 * failed (a 409 on a stale resourceVersion) changes nothing. A release (holderIdentity emptied)
 * is a successful write like a renew: the next replica's acquire ends the term.
 *
 * A write by a replica received (requestReceivedTimestamp) outside all of its terms is a
 * violation, whatever its answer: a fenced replica sends nothing. Events are not counted: they
 * report, they change no object the campaign judges, and a recorder may flush them late. Nor are
 * the writes a fault proxy held and delivered late (`deliveredLate`, by audit ID: the late class,
 * classes/late.ts): the replica sent them in its term, and their lateness is the fault.
 */
import type { AuditRecord } from './audit.js';
import { iso, type Violation } from './types.js';

export interface LeaseRef {
  namespace: string;
  name: string;
  durationS: number;
}

export interface LeaseTerm {
  replica: string;
  /** The acquire's requestReceivedTimestamp (ms). */
  start: number;
  /** Last renew answered + duration, or the next replica's acquire received (ms). */
  end: number;
}

const WRITE_VERBS = new Set(['create', 'update', 'patch', 'delete', 'deletecollection']);
const REPORTS = new Set(['events']);

function isLeaseWrite(r: AuditRecord, lease: LeaseRef): boolean {
  return r.resource === 'leases' && r.namespace === lease.namespace && r.name === lease.name && WRITE_VERBS.has(r.verb);
}

export function leaseTerms(records: readonly AuditRecord[], lease: LeaseRef): LeaseTerm[] {
  const terms: LeaseTerm[] = [];
  const durationMs = lease.durationS * 1000;
  const writes = records.filter((r) => isLeaseWrite(r, lease) && r.replica !== undefined && r.code >= 200 && r.code < 300);
  for (const w of [...writes].sort((a, b) => a.at - b.at)) {
    const current = terms.at(-1);
    if (current && current.replica === w.replica && w.at <= current.end) {
      current.end = Math.max(current.end, w.done + durationMs);
      continue;
    }
    if (current) current.end = Math.min(current.end, w.at);
    terms.push({ replica: w.replica!, start: w.at, end: w.done + durationMs });
  }
  return terms;
}

export function writesOutsideTerm(
  records: readonly AuditRecord[],
  lease: LeaseRef,
  namespace: string,
  deliveredLate: readonly string[] = [],
): Violation[] {
  const terms = leaseTerms(records, lease);
  const outside = new Map<string, AuditRecord[]>();
  for (const r of records) {
    if (r.replica === undefined || r.namespace !== namespace || !WRITE_VERBS.has(r.verb)) continue;
    if (r.auditID !== undefined && deliveredLate.includes(r.auditID)) continue;
    if (r.resource === 'leases' || REPORTS.has(r.resource)) continue;
    if (terms.some((t) => t.replica === r.replica && t.start <= r.at && r.at <= t.end)) continue;
    outside.set(r.replica, [...(outside.get(r.replica) ?? []), r]);
  }
  return [...outside].map(([replica, writes]) => {
    const own = terms.filter((t) => t.replica === replica);
    const held = own.length ? own.map((t) => `${iso(t.start)} to ${iso(t.end)}`).join(', ') : 'never';
    return {
      invariant: 'write-outside-term' as const,
      detail:
        `replica ${replica} made ${writes.length} write(s) outside its lease terms (it held ${lease.namespace}/${lease.name}: ${held}): ` +
        writes
          .slice(0, 3)
          .map(
            (w) => `${w.verb} ${w.resource}${w.subresource ? `/${w.subresource}` : ''} ${w.name ?? ''} -> ${w.code} received ${iso(w.at)}`,
          )
          .join('; ') +
        (writes.length > 3 ? '; ...' : ''),
    };
  });
}
