/**
 * The writes a replica made, as the fault proxy counts them: the intermediate-state fault kills a
 * replica right after its k-th one, so the count must be the same in every run of one workload.
 *
 * Counted: POST, PUT, PATCH and DELETE that the server answered (any status: a refused write is a
 * write site too). Not counted, because they come at the pace of time rather than of the work:
 * coordination.k8s.io Leases (the elector's renewals), core and events.k8s.io Events, and the
 * authentication/authorization reviews (POSTs that store nothing).
 */
import type { ProxyWrite } from './types.js';

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

const LEASES = /^\/apis\/coordination\.k8s\.io\/[^/]+\/namespaces\/[^/]+\/leases(\/|$)/;

const UNCOUNTED = [
  LEASES,
  /^\/api\/v1\/namespaces\/[^/]+\/events(\/|$)/,
  /^\/apis\/events\.k8s\.io\/[^/]+\/namespaces\/[^/]+\/events(\/|$)/,
  /^\/apis\/(authentication|authorization)\.k8s\.io\//,
];

/** Whether a request (its method, its path without the query) is a counted write. */
export function isCountedWrite(method: string, path: string): boolean {
  return WRITE_METHODS.has(method) && !UNCOUNTED.some((re) => re.test(path));
}

/** Whether a request is a write to a Lease: an elector's acquire, renewal or release. */
export function isLeaseWrite(method: string, path: string): boolean {
  return WRITE_METHODS.has(method) && LEASES.test(path);
}

/** The counted writes in the order their answers came, and the callbacks that hear of each. */
export class WriteLog {
  private readonly writes: ProxyWrite[] = [];
  private readonly callbacks: ((w: ProxyWrite) => void)[] = [];

  /** Records an answered write and runs every callback on it, synchronously (before the answer is passed on). */
  record(verb: string, path: string, status: number): void {
    const w: ProxyWrite = { seq: this.writes.length + 1, verb, path, status, at: Date.now() };
    this.writes.push(w);
    for (const cb of this.callbacks) cb(w);
  }

  list(): ProxyWrite[] {
    return this.writes.map((w) => ({ ...w }));
  }

  onWrite(cb: (w: ProxyWrite) => void): void {
    this.callbacks.push(cb);
  }
}
