/** The values the fault proxy hands out: its own module, so the proxy's parts need not import the proxy. */

/** A write the server answered, as the proxy counted it (proxy-writes.ts says which count). */
export interface ProxyWrite {
  seq: number;
  /** The HTTP method. */
  verb: string;
  /** The request's path, without the query. */
  path: string;
  status: number;
  at: number /* Date.now() when the response came */;
}

/** A watch line, parsed: what the watch faults pick events by. */
export interface WatchEvent {
  type: string;
  object: { kind?: string; metadata?: { name?: string; namespace?: string; resourceVersion?: string } };
}
