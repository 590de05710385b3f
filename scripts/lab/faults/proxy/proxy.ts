/**
 * The fault proxy: the one way a replica of a program under test reaches the API server in the
 * fault campaign, and the place every fault of its view of the cluster is injected (kills after a
 * write, held-back, dropped, merged and expired watch events, partitions, overload storms, writes
 * held and delivered late, answers held (proxy/late.ts) or replaced (proxy/ambiguous.ts)).
 *
 * The replica talks plain HTTP/1.1 to 127.0.0.1 (its kubeconfig has no credentials); the proxy
 * forwards over HTTPS as the admin, impersonating the replica's ServiceAccount with the extra
 * `replica` (proxy/upstream.ts), so RBAC is enforced as in a real install and the audit log names
 * the replica of every write. Watches are streamed line by line (proxy/watch.ts).
 *
 * Guarantees: every request is forwarded at once and unchanged (but for identity headers, and
 * JSON instead of protobuf for watches, and the Audit-ID of a write delivered late) unless a fault
 * is in force; faults act from the call on,
 * also on watches already open; close() stops the listener, destroys every connection and clears
 * every timer, leaving nothing running.
 */
import { rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { HiddenOutcomes } from './ambiguous.js';
import { Exchange } from './exchange.js';
import { LateWrites } from './late.js';
import { answerExpiredWatch, answerStorm, type StormStatus } from './status.js';
import { writeProxyKubeconfig } from '../../../testbed/proxykubeconfig.js';
import { impersonatingUpstream } from './upstream.js';
import { isObjectEvent, WatchFaults } from './watch.js';
import { isCountedWrite, isLeaseWrite, WriteLog } from './writes.js';

import type { LeaseRenewal, ProxyEffects, ProxyWrite, WatchBacklog, WatchEvent } from './types.js';

export type { LeaseRenewal, ProxyEffects, ProxyWrite, WatchBacklog, WatchEvent } from './types.js';

export interface FaultProxy {
  /** A kubeconfig (plain http://127.0.0.1:<port>, no credentials) for the replica. */
  kubeconfig: string;
  replica: string;
  /** Writes (POST/PUT/PATCH/DELETE) the server answered, except to coordination.k8s.io leases and core events. */
  writes(): ProxyWrite[];
  /** Called after the server answered the n-th counted write and BEFORE the response is passed to the client. */
  onWrite(cb: (w: ProxyWrite) => void): void;
  /** The Lease writes answered 2xx whose answers reached the replica, in the order they did. */
  leaseRenewals(): LeaseRenewal[];
  /** Partition: every open connection and new request hangs (no bytes either way) until restore(). */
  silence(): void;
  restore(): void;
  /** Watch events (matching watches) reach the client `ms` later than the server sent them (0 = off). */
  delayWatches(ms: number, match?: RegExp): void;
  /** Drop the next `count` watch events that `pick` selects (parsed event {type, object}). */
  dropWatchEvents(count: number, pick?: (e: WatchEvent) => boolean): void;
  /** Merge: hold MODIFIED events per object for `ms`, passing only the last one of each object (of matching watches). */
  mergeWatchEvents(ms: number, match?: RegExp): void;
  /** Calls `cb` with every watch event as it is passed on to the replica (undefined: no more). */
  onWatchEvent(cb: ((path: string, event: WatchEvent) => void) | undefined): void;
  /** End every open watch with an ERROR event of code 410 (Expired) as the server would, and answer
   *  the next `nextWatches` watch requests with 410 too: forces the client to re-list. */
  expireWatches(nextWatches?: number): void;
  /** For `ms`: answer `fraction` (0..1, deterministic from the seed's PRNG given) of requests with
   *  `status` (429/500/503) and `Retry-After: retryAfterS` and a Status body, without forwarding. */
  storm(opts: { status: 429 | 500 | 503; retryAfterS: number; ms: number; fraction: number; random: () => number }): void;
  /** Resets every open watch's connection (no 410, no end event): the replica resumes each from its resourceVersion. */
  resetWatches(): void;
  /** The late class: writes held before the server sees them, answers held after (proxy/late.ts). */
  late: LateWrites;
  /** The ambiguous class: committed writes whose answers are replaced (proxy/ambiguous.ts). */
  ambiguous: HiddenOutcomes;
  /** What its faults did so far (a copy). */
  effects(): ProxyEffects;
  /** The watch events it holds back from the replica now, over all its watches. */
  watchBacklog(): WatchBacklog;
  close(): Promise<void>;
}

/** A storm in force: until `until` (performance.now()), each request draws once from `random`. */
interface Storm {
  status: StormStatus;
  retryAfterS: number;
  until: number;
  fraction: number;
  random: () => number;
}

const isWatchQuery = (url: URL): boolean => ['true', '1'].includes(url.searchParams.get('watch') ?? '');

/**
 * Starts a proxy for one replica. Faults are off until a method turns them on. Notes on the
 * methods beyond their one-line contract:
 * - delayWatches: `match` is tested on the watch's path without the query (e.g. /echos$/).
 * - dropWatchEvents: `pick` defaults to ADDED, MODIFIED and DELETED events (not BOOKMARK or ERROR);
 *   a call replaces what is left of the previous one.
 * - mergeWatchEvents: a later event of an object whose MODIFIED is held (DELETED, or ADDED again)
 *   supersedes the held one; the window runs from the first held event (updates every few
 *   milliseconds still get one event per window); 0 stops merging new events.
 * - expireWatches: the 410 comes after what a delayed watch already holds (order is kept).
 * - storm: each request during the storm draws once from `random` and is refused when the draw
 *   is below `fraction`; `ms: 0` ends a storm; a new storm replaces the old one.
 * - silence/restore: requests made during the silence are held, never forwarded; restore()
 *   destroys every held and frozen connection (a partition's TCP connections die) and lets new
 *   requests through.
 */
export async function startFaultProxy(opts: {
  adminKubeconfig: string;
  replica: string;
  impersonate: { user: string; groups: string[] };
  /** Requests whose path (no query) matches go to this other API server (as one connection of several behind a load balancer may). */
  route?: { match: RegExp; adminKubeconfig: string };
}): Promise<FaultProxy> {
  const identity = { ...opts.impersonate, replica: opts.replica };
  const upstream = await impersonatingUpstream(opts.adminKubeconfig, identity);
  const routed = opts.route && { match: opts.route.match, upstream: await impersonatingUpstream(opts.route.adminKubeconfig, identity) };
  const faults = new WatchFaults();
  const writeLog = new WriteLog();
  const renewals: LeaseRenewal[] = [];
  const exchanges = new Set<Exchange>();
  const sockets = new Set<Socket>();
  let silent = false;
  let storm: Storm | undefined;
  let expireNext = 0;
  const late = new LateWrites(upstream);
  const ambiguous = new HiddenOutcomes();

  /** Whether the storm refuses this request (drawing once while it lasts). */
  const stormRefuses = (): Storm | undefined => {
    if (!storm) return undefined;
    if (performance.now() >= storm.until) {
      storm = undefined;
      return undefined;
    }
    return storm.random() < storm.fraction ? storm : undefined;
  };

  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://proxy');
    if (!silent && late.take(req, res, url.pathname)) return;
    const ex = new Exchange(req, res, url.pathname, isWatchQuery(url), faults.effects);
    exchanges.add(ex);
    res.once('close', () => {
      ex.clientClosed();
      if (!ex.frozen) exchanges.delete(ex);
    });
    if (silent) {
      ex.freeze();
      return;
    }
    const refusal = stormRefuses();
    if (refusal) {
      faults.effects.refused++;
      answerStorm(res, refusal.status, refusal.retryAfterS);
      return;
    }
    if (ex.watch && expireNext > 0) {
      expireNext--;
      faults.effects.expiredByProxy++;
      answerExpiredWatch(res);
      return;
    }
    const method = req.method ?? 'GET';
    const receivedAt = Date.now();
    ex.forward(routed?.match.test(ex.path) ? routed.upstream : upstream, faults, (status) => {
      if (status === 410) faults.effects.expiredByServer++;
      if (isCountedWrite(method, ex.path)) writeLog.record(method, ex.path, status);
      // 'finish' never comes for an answer a partition holds back: the replica never saw it.
      else if (isLeaseWrite(method, ex.path) && status >= 200 && status < 300)
        res.once('finish', () => renewals.push({ receivedAt, answeredAt: Date.now() }));
      return ambiguous.answerFate(method, ex.path, status) ?? late.answerFate(method, ex.path, status);
    });
  });
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const port = (server.address() as { port: number }).port;
  const kubeconfig = join(dirname(opts.adminKubeconfig), `fault-proxy-${opts.replica.replace(/[^\w.-]/g, '_')}-${port}.kubeconfig`);
  writeProxyKubeconfig(kubeconfig, port);

  const destroyAll = (which: (ex: Exchange) => boolean): void => {
    for (const ex of [...exchanges]) {
      if (!which(ex)) continue;
      exchanges.delete(ex);
      ex.destroy();
    }
  };

  return {
    kubeconfig,
    replica: opts.replica,
    writes: () => writeLog.list(),
    onWrite: (cb) => writeLog.onWrite(cb),
    leaseRenewals: () => renewals.map((r) => ({ ...r })),
    silence: () => {
      silent = true;
      for (const ex of exchanges) ex.freeze();
    },
    restore: () => {
      silent = false;
      destroyAll((ex) => ex.frozen);
    },
    delayWatches: (ms, match) => {
      faults.delayMs = ms;
      faults.delayMatch = match;
    },
    dropWatchEvents: (count, pick) => {
      faults.dropCount = count;
      faults.dropPick = pick ?? isObjectEvent;
    },
    mergeWatchEvents: (ms, match) => {
      faults.mergeMs = ms;
      faults.mergeMatch = match;
    },
    onWatchEvent: (cb) => {
      faults.delivered = cb;
    },
    expireWatches: (nextWatches = 0) => {
      expireNext = nextWatches;
      for (const ex of exchanges) ex.expire(answerExpiredWatch);
    },
    storm: (o) => {
      storm =
        o.ms > 0
          ? { status: o.status, retryAfterS: o.retryAfterS, until: performance.now() + o.ms, fraction: o.fraction, random: o.random }
          : undefined;
    },
    resetWatches: () => {
      const open = [...exchanges].filter((ex) => ex.openWatch && !ex.frozen);
      faults.effects.watchesReset += open.length;
      destroyAll((ex) => open.includes(ex));
    },
    late,
    ambiguous,
    effects: () => ({ ...faults.effects }),
    watchBacklog: () => {
      let events = 0;
      let oldestMs = 0;
      for (const ex of exchanges) {
        const b = ex.backlog();
        events += b.events;
        oldestMs = Math.max(oldestMs, b.oldestMs);
      }
      return { events, oldestMs };
    },
    close: async () => {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      destroyAll(() => true);
      late.close();
      for (const socket of sockets) socket.destroy();
      upstream.close();
      routed?.upstream.close();
      rmSync(kubeconfig, { force: true });
      await closed;
    },
  };
}
