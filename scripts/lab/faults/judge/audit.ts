/**
 * The API server's audit log as the fault campaign's judge reads it: one record per answered
 * write (stage ResponseComplete, or Panic), in the order the server logged them. The log is
 * written by the control plane's policy (scripts/testbed/controlplane/cluster.ts: write verbs on the
 * operator's resources, Jobs and leases); it is the server's word on who wrote what and when,
 * never the program's.
 *
 * Guarantees: a record's `at` and `done` are the server's own timestamps (requestReceived and
 * stage, in ms); `replica` is the `replica` extra the fault proxy impersonates with
 * (Impersonate-Extra-Replica), so a write is attributed to the replica whose proxy sent it,
 * whatever identity the program claims; a line cut by a rotation, or not JSON, is skipped; a log
 * rotated since `fromOffset` is read on from the rotated file (appendedSince).
 */
import { statSync } from 'node:fs';
import { appendedSince } from '../../bench/apiwrites.js';

export interface AuditRecord {
  /** requestReceivedTimestamp, ms */
  at: number;
  /** stageTimestamp, ms: when the answer was complete */
  done: number;
  verb: string;
  code: number;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** impersonatedUser.extra.replica[0] */
  replica?: string;
  userAgent: string;
  /** The request's audit ID (the client's Audit-ID header when it sent one: the late class's proxy does). */
  auditID?: string;
}

/**
 * A record with the bodies the policy logs for it: an Echo write's answer (responseObject) and a
 * Job create's request (requestObject). Absent for every other write, and for all writes on a
 * control plane started with an older policy.
 */
export interface AuditRecordWithObjects extends AuditRecord {
  requestObject?: unknown;
  responseObject?: unknown;
}

interface AuditEvent {
  auditID?: string;
  stage?: string;
  verb?: string;
  userAgent?: string;
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  impersonatedUser?: { extra?: Record<string, string[] | undefined> };
  requestObject?: unknown;
  responseObject?: unknown;
}

/** Where the log ends now: a later readAudit from here sees only what comes after. 0 when there is no log yet. */
export function auditOffset(auditLogPath: string): number {
  try {
    return statSync(auditLogPath).size;
  } catch {
    return 0;
  }
}

export function readAudit(auditLogPath: string, fromOffset: number): AuditRecord[] {
  return readAuditWithObjects(auditLogPath, fromOffset).map(({ requestObject: _req, responseObject: _res, ...record }) => record);
}

export function readAuditWithObjects(auditLogPath: string, fromOffset: number): AuditRecordWithObjects[] {
  const records: AuditRecordWithObjects[] = [];
  for (const line of appendedSince(auditLogPath, fromOffset).split('\n')) {
    if (!line.startsWith('{')) continue;
    let ev: AuditEvent;
    try {
      ev = JSON.parse(line) as AuditEvent;
    } catch {
      continue; // cut by a rotation
    }
    const record = toRecord(ev);
    if (record) records.push(record);
  }
  return records;
}

function toRecord(ev: AuditEvent): AuditRecordWithObjects | undefined {
  if (ev.stage !== 'ResponseComplete' && ev.stage !== 'Panic') return undefined;
  const at = Date.parse(ev.requestReceivedTimestamp ?? '');
  const done = Date.parse(ev.stageTimestamp ?? '');
  if (!ev.verb || !ev.objectRef?.resource || Number.isNaN(at) || Number.isNaN(done)) return undefined;
  const ref = ev.objectRef;
  const record: AuditRecordWithObjects = {
    at,
    done,
    verb: ev.verb,
    code: ev.responseStatus?.code ?? 0,
    resource: ref.resource!,
    userAgent: ev.userAgent ?? '',
  };
  if (ref.subresource) record.subresource = ref.subresource;
  if (ref.namespace) record.namespace = ref.namespace;
  if (ref.name) record.name = ref.name;
  const replica = ev.impersonatedUser?.extra?.replica?.[0];
  if (replica !== undefined) record.replica = replica;
  if (ev.auditID) record.auditID = ev.auditID;
  if (ev.requestObject !== undefined) record.requestObject = ev.requestObject;
  if (ev.responseObject !== undefined) record.responseObject = ev.responseObject;
  return record;
}
