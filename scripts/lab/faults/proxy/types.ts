/** The values the fault proxy hands out: its own module, so the proxy's parts need not import the proxy. */

/** A write the server answered, as the proxy counted it (proxy/writes.ts says which count). */
export interface ProxyWrite {
  seq: number;
  /** The HTTP method. */
  verb: string;
  /** The request's path, without the query. */
  path: string;
  status: number;
  at: number /* Date.now() when the response came */;
}

/**
 * A Lease write the server answered 2xx and whose answer reached the replica whole: one its
 * elector could count (an acquire or a renewal), unlike one whose answer a partition withheld.
 */
export interface LeaseRenewal {
  /** Date.now() when the request reached the proxy (just after the replica sent it). */
  receivedAt: number;
  /** Date.now() when the whole answer was handed to the replica's connection. */
  answeredAt: number;
}

/** A watch line, parsed: what the watch faults pick events by. */
export interface WatchEvent {
  type: string;
  object: { kind?: string; metadata?: { name?: string; namespace?: string; resourceVersion?: string } };
}
