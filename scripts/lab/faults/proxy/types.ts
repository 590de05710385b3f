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
  object: { kind?: string; metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string } };
}

/**
 * What a proxy's faults did to its replica, counted as they happen: the evidence that a schedule's
 * faults had an effect (report.ts leaves a schedule without one out of its denominators).
 */
export interface ProxyEffects {
  /** Watch events never passed on (dropWatchEvents). */
  eventsDropped: number;
  /** MODIFIED events superseded by a later event of their object inside a merge window. */
  eventsMerged: number;
  /** Watch events passed on later than the server sent them (delayWatches). */
  eventsDelayed: number;
  /** 410 Expired the proxy sent: open watches it ended, watch requests it refused. */
  expiredByProxy: number;
  /** 410s the server sent that the proxy passed on (ERROR events, or answers with status 410). */
  expiredByServer: number;
  /** Requests answered 429/500/503 by a storm without reaching the server. */
  refused: number;
  /** Requests frozen or held by a partition (their bytes stopped either way). */
  held: number;
  /** Requests whose connection to the server failed mid-way (a kube-apiserver killed under them). */
  cut: number;
  /** Open watches the proxy reset on purpose (resetWatches): a cause, not an effect by itself. */
  watchesReset: number;
}

export const noEffects = (): ProxyEffects => ({
  eventsDropped: 0,
  eventsMerged: 0,
  eventsDelayed: 0,
  expiredByProxy: 0,
  expiredByServer: 0,
  refused: 0,
  held: 0,
  cut: 0,
  watchesReset: 0,
});

/** Watch events a replica's cache has not had yet: the proxy holds them back (a lagging watch). */
export interface WatchBacklog {
  events: number;
  /** How long the oldest of them has been held, ms (0 when none). */
  oldestMs: number;
}
