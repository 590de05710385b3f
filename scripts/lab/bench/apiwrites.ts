/**
 * Counting API writes over a window, two independent ways:
 *
 *  - exact: the API server's audit log (our control planes write one, Metadata level, write verbs
 *    only, see scripts/testbed/controlplane/cluster.ts), filtered by the writer's User-Agent and the
 *    namespaces of interest; unavailable on a control plane started before the audit log existed
 *    or on a foreign cluster;
 *  - cluster-wide: apiserver_request_total{verb=~"POST|PUT|PATCH|DELETE"} from the API server's
 *    own /metrics, for the resources the operator writes. It has no namespace or client label,
 *    so whatever else runs on the cluster (other tests) is counted too: an upper bound.
 */
import { closeSync, existsSync, openSync, readdirSync, readSync, statSync } from 'node:fs';
import { basename, dirname, extname, join } from 'node:path';
import { getText, parseProm, type BenchEnv, auditLogPath } from './common.js';

const WRITE_VERBS = /^(POST|PUT|PATCH|DELETE|DELETECOLLECTION)$/;
const RESOURCES = new Set(['jobs', 'echos', 'scheduledechos', 'cronjobs', 'events']);

export interface WriteCount {
  total: number;
  /** "verb resource[/subresource]" -> count. */
  by: Record<string, number>;
}

export interface WriteCounts {
  /** Exact, from the audit log; undefined when there is none. */
  audit: WriteCount | undefined;
  /**
   * The same writes split by writer: the User-Agent's product ("echoperator", "echoperator-peer",
   * "kube-controller-manager", ...), so one read gives each program's share of one window.
   */
  auditByAgent: Record<string, WriteCount> | undefined;
  /** Cluster-wide, from apiserver_request_total (includes every other client's writes). */
  apiserver: WriteCount;
}

async function apiserverWrites(env: BenchEnv): Promise<Map<string, number>> {
  const samples = parseProm(await getText(env.rest, '/metrics'));
  const out = new Map<string, number>();
  for (const s of samples) {
    if (s.name !== 'apiserver_request_total') continue;
    if (!WRITE_VERBS.test(s.labels.verb ?? '') || !RESOURCES.has(s.labels.resource ?? '')) continue;
    const key = `${s.labels.verb} ${s.labels.resource}${s.labels.subresource ? `/${s.labels.subresource}` : ''}`;
    out.set(key, (out.get(key) ?? 0) + s.value);
  }
  return out;
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function readRange(path: string, start: number): string {
  const size = fileSize(path);
  if (size <= start) return '';
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.alloc(size - start);
    readSync(fd, buf, 0, buf.length, start);
    return buf.toString('utf8');
  } finally {
    closeSync(fd);
  }
}

/**
 * What the log gained since `offset`. The log is capped (kube-apiserver rotates it to
 * audit-<time>.log beside it): when it was rotated meanwhile, what the window wrote before the
 * rotation is read from the newest rotated file, from the offset on, then the new file whole.
 */
export function appendedSince(path: string, offset: number): string {
  if (!existsSync(path)) return '';
  if (fileSize(path) >= offset) return readRange(path, offset);
  const dir = dirname(path);
  const stem = basename(path, extname(path));
  // Rotated names end in the time of the rotation, which sorts as text.
  const rotated = readdirSync(dir)
    .filter((f) => f.startsWith(`${stem}-`) && f.endsWith(extname(path)))
    .sort()
    .at(-1);
  return (rotated ? readRange(join(dir, rotated), offset) : '') + readRange(path, 0);
}

interface AuditEvent {
  stage?: string;
  verb?: string;
  userAgent?: string;
  objectRef?: { resource?: string; subresource?: string; namespace?: string };
  responseStatus?: { code?: number };
}

export class WriteCounter {
  private constructor(
    private readonly env: BenchEnv,
    private readonly filter: { namespaces: string[]; userAgentPrefix: string },
    private readonly before: Map<string, number>,
    private readonly auditPath: string | undefined,
    private readonly auditOffset: number,
  ) {}

  /** userAgentPrefix: the operator sends `echoperator/<version> (<host>)`. */
  static async start(env: BenchEnv, filter: { namespaces: string[]; userAgentPrefix?: string }): Promise<WriteCounter> {
    const audit = auditLogPath(env);
    return new WriteCounter(
      env,
      { namespaces: filter.namespaces, userAgentPrefix: filter.userAgentPrefix ?? 'echoperator/' },
      await apiserverWrites(env),
      audit,
      audit ? fileSize(audit) : 0,
    );
  }

  async stop(): Promise<WriteCounts> {
    const after = await apiserverWrites(this.env);
    const apiserver: WriteCount = { total: 0, by: {} };
    for (const [k, v] of after) {
      const d = v - (this.before.get(k) ?? 0);
      if (d > 0) {
        apiserver.by[k] = d;
        apiserver.total += d;
      }
    }
    let audit: WriteCount | undefined;
    let auditByAgent: Record<string, WriteCount> | undefined;
    if (this.auditPath) {
      audit = { total: 0, by: {} };
      auditByAgent = {};
      const namespaces = new Set(this.filter.namespaces);
      for (const line of appendedSince(this.auditPath, this.auditOffset).split('\n')) {
        if (!line) continue;
        let ev: AuditEvent;
        try {
          ev = JSON.parse(line) as AuditEvent;
        } catch {
          continue; // a line cut by rotation
        }
        if (ev.stage !== 'ResponseComplete' && ev.stage !== 'Panic') continue;
        if (!ev.userAgent?.startsWith(this.filter.userAgentPrefix)) continue;
        if (!namespaces.has(ev.objectRef?.namespace ?? '')) continue;
        const code = ev.responseStatus?.code ?? 0;
        // Failed writes (e.g. 409 on a conditional status patch) are writes too, shown apart.
        const failed = code >= 300 ? ` -> ${code}` : '';
        const key = `${ev.verb} ${ev.objectRef?.resource}${ev.objectRef?.subresource ? `/${ev.objectRef.subresource}` : ''}${failed}`;
        audit.by[key] = (audit.by[key] ?? 0) + 1;
        audit.total++;
        const agent = (auditByAgent[userAgentProduct(ev.userAgent)] ??= { total: 0, by: {} });
        agent.by[key] = (agent.by[key] ?? 0) + 1;
        agent.total++;
      }
    }
    return { audit, auditByAgent, apiserver };
  }
}

/** "echoperator/0.1.0 (host)" -> "echoperator"; "kube-controller-manager/v1.34 ..." -> "kube-controller-manager". */
export function userAgentProduct(userAgent: string): string {
  return userAgent.split(/[/ ]/, 1)[0] ?? '';
}

/** Status writes to Echos answered 409 Conflict: a pass that acted on an older copy than the server's. */
export function statusConflicts(c: WriteCount | undefined): number | undefined {
  return c?.by['patch echos/status -> 409'] ?? (c ? 0 : undefined);
}

export function formatWrites(c: WriteCount | undefined): string {
  if (!c) return 'n/a';
  const parts = Object.entries(c.by)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${v} ${k}`);
  return parts.length ? `${c.total} (${parts.join(', ')})` : '0';
}

/** Successful writes of core/v1 Events (creates and count patches) in a count. */
export function eventWrites(c: WriteCount): number {
  let sum = 0;
  for (const [key, v] of Object.entries(c.by)) {
    // "<verb> events", without a " -> <code>" suffix: failed writes wrote no Event.
    if (key.split(' ')[1] === 'events' && !key.includes(' -> ')) sum += v;
  }
  return sum;
}

/**
 * Events written per Echo over a window: what makes two programs' figures comparable (a program
 * that held its Events back past the window did less work in it). Undefined without an audit log.
 */
export function eventsPerEcho(c: WriteCount | undefined, echos: number): number | undefined {
  return c && echos > 0 ? eventWrites(c) / echos : undefined;
}

/** "0.60", or "n/a" when it was not measured. */
export function formatPerEcho(x: number | undefined): string {
  return x === undefined || !Number.isFinite(x) ? 'n/a' : x.toFixed(2);
}
