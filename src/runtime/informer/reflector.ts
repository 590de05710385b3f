/**
 * Reflector: keeps a sink (the informer's store) in step with the API server by LIST then WATCH,
 * with the behaviour of client-go's reflector. It never stops on its own: only aborting its
 * signal ends run(), or a bug (a throw from the transform or the sink), which run() rejects with.
 *
 * The loop:
 *  - LIST in pages of pageSize (500) following continue tokens; if a token expires (410) while
 *    paging, the list starts over once, then a further expiry counts as a failure. The sink gets
 *    the complete list at once (replace), never a partial one.
 *  - WATCH from the list's resourceVersion with allowWatchBookmarks and a server-side
 *    timeoutSeconds drawn from [minWatchTimeoutSeconds, 2x) (client-go: 5-10 min), so the
 *    watches of many replicas do not all end together.
 *  - Every event (bookmarks included) advances the resourceVersion the next watch starts from;
 *    bookmarks reach no one but this bookkeeping.
 *  - A watch that ends normally is re-opened at once from that resourceVersion. One that ends
 *    within a second without a single event counts as a failure, so a server that closes
 *    watches at once cannot make us spin.
 *  - 410 Gone on a watch (the resourceVersion was compacted away) re-lists; the sink's replace
 *    turns the difference into adds, updates and deletes. The re-list is immediate, unless no
 *    event arrived since the previous list (the server rejects even a fresh resourceVersion),
 *    in which case it waits out the backoff first.
 *  - Any other error backs off (backoff.ts, client-go's 800 ms .. 30 s) and retries: a failed
 *    list lists again, a failed watch re-watches from the last resourceVersion (cheaper than
 *    client-go's re-list; if that version is gone by then, the 410 path re-lists).
 *  - An inactivity watchdog aborts a watch that has delivered nothing (not even a bookmark) for
 *    inactivityTimeoutMs, and re-watches at once. The default, 3 minutes, is three times the
 *    API server's bookmark period (1 minute on watches served from its watch cache), so a
 *    healthy stream is never cut, while a dead one (a half-open TCP connection, a proxy that
 *    dropped the stream) is noticed long before its 5-10 minute server-side timeout would have
 *    ended it; a stream that is merely quiet costs one cheap re-watch.
 *  - A watch line that does not decode (not JSON, an unknown event type, an object that is not
 *    a JSON object) ends the watch, as apimachinery's StreamWatcher ends it: counted
 *    (malformedEvent by reason, and watchError 'undecodable'), logged, and re-watched after the
 *    backoff from the resourceVersion of the last event applied, so the server sends that event
 *    again and the cache never keeps an old object in its place; the backoff keeps a stream that
 *    stays bad from making us spin. Only events before it were applied: nothing after it is read.
 *  - An event that decodes but cannot be cached (no name, another kind) is logged, counted
 *    (malformedEvent) and skipped, as client-go's reflector does; the watch goes on and the
 *    resourceVersion does not move. A listed item that could not be cached (null, no name,
 *    another kind) is skipped the same way.
 *  - Listed objects are transformed one by one as the page is decoded, so a page's untrimmed
 *    objects are never all alive at once (see kube/listdecode.ts).
 *
 * Every timer (backoff sleep, watchdog) and every request belongs to run(): when its signal
 * aborts, they are cancelled before run() resolves.
 */
import { nopLogger, type Logger } from '../log.js';
import { describeError, isGone } from '../../kube/errors.js';
import { Backoff, type BackoffOptions } from '../backoff.js';
import { realClock, type Clock, type Timer } from '../clock.js';
import type { KubeObject } from '../cache/store.js';
import { watchEventError, type ListerWatcher, type WatchEvent } from './listwatch.js';
import { endsWatch, malformedObject, malformedWatchEvent, type ExpectedType, type MalformedReason } from './malformed.js';

/** Where the reflector delivers what it learns; calls are synchronous and in order. */
export interface ReflectorSink<T> {
  /** A complete list at resourceVersion: the cache must become exactly this. */
  replace(items: T[], resourceVersion: string): void;
  /** One change seen by the watch; obj is already transformed. */
  apply(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void;
}

/**
 * What an informer tells the metrics layer; the metrics layer binds the informer's name (a
 * label) when it builds this object. The default does nothing.
 */
export interface InformerMetrics {
  /** informer_list_requests_total: one LIST request, i.e. one page. */
  listRequest(): void;
  /** informer_list_errors_total: a list that failed (and will be retried after backoff). */
  listError(): void;
  /** informer_relists_total: a list after the first successful one (after 410 Gone). */
  relist(): void;
  /** informer_watches_total: a WATCH request opened. */
  watchStarted(): void;
  /**
   * informer_watch_errors_total{reason}: 'gone' (410, re-list), 'error' (backoff),
   * 'inactive' (watchdog fired), 'short' (ended at once without events, backoff),
   * 'undecodable' (a line that did not decode ended it; backoff, re-watch).
   */
  watchError(reason: WatchErrorReason): void;
  /** informer_malformed_events_total{reason}: a watch event or listed item skipped, or a line that ended the watch (malformed.ts). */
  malformedEvent(reason: MalformedReason): void;
}

/** Why a watch ended abnormally: the reasons of watchError, each created at zero by the metrics layer. */
export const WATCH_ERROR_REASONS = ['gone', 'error', 'inactive', 'short', 'undecodable'] as const;
export type WatchErrorReason = (typeof WATCH_ERROR_REASONS)[number];

export const nopInformerMetrics: InformerMetrics = {
  listRequest() {},
  listError() {},
  relist() {},
  watchStarted() {},
  watchError() {},
  malformedEvent() {},
};

export interface ReflectorOptions<T> {
  clock?: Clock;
  /** Used as given: the caller binds the informer's name to it. */
  logger?: Logger;
  metrics?: InformerMetrics;
  /** Uniform in [0, 1): watch timeouts and backoff jitter. */
  random?: () => number;
  /** Objects per LIST page; default 500 (client-go's). 0 = no pagination. */
  pageSize?: number;
  /** Server-side watch timeouts are drawn from [this, 2x this); default 300 s. */
  minWatchTimeoutSeconds?: number;
  /** A watch silent this long is aborted and re-opened; default 180 s (see above). */
  inactivityTimeoutMs?: number;
  /** Defaults: client-go's reflector backoff; clock and random default to the ones above. */
  backoff?: BackoffOptions;
  /** Applied to every listed or watched object before the sink sees it; default identity. */
  transform?: (obj: T) => T;
  /** Objects of another apiVersion or kind are skipped as malformed; undefined: not checked. */
  expectedType?: ExpectedType;
}

export interface ReflectorStatus {
  /** A watch is open. */
  watching: boolean;
  /** The resourceVersion the next watch starts from; '' before the first list. */
  lastSyncResourceVersion: string;
  /** The last list or watch error, kept after recovery (history, not health). */
  lastError?: string;
  /** Failures in a row; 0 once a list succeeds or a watch delivers an event. */
  consecutiveFailures: number;
}

export const DEFAULT_PAGE_SIZE = 500;
export const DEFAULT_MIN_WATCH_TIMEOUT_SECONDS = 300;
export const DEFAULT_INACTIVITY_TIMEOUT_MS = 180_000;
/** A watch that ends sooner than this without any event is treated as a failure. */
const SHORT_WATCH_MS = 1_000;

/** A bug in the transform or the sink: retrying cannot help, so run() rejects with `cause`. */
class SinkFailure extends Error {
  override readonly name = 'SinkFailure';
  constructor(override readonly cause: unknown) {
    super('the transform or the sink threw');
  }
}

class ShortWatchError extends Error {
  override readonly name = 'ShortWatchError';
}

/** A watch line that did not decode: the watch ends here, and is re-opened from the last applied event. */
class UndecodableEventError extends Error {
  override readonly name = 'UndecodableEventError';
  constructor(readonly reason: MalformedReason) {
    super(`a watch event could not be decoded (${reason})`);
  }
}

export class Reflector<T extends KubeObject> {
  private readonly clock: Clock;
  private readonly logger: Logger;
  private readonly metrics: InformerMetrics;
  private readonly random: () => number;
  private readonly pageSize: number;
  private readonly minWatchTimeoutSeconds: number;
  private readonly inactivityTimeoutMs: number;
  private readonly transform: (obj: T) => T;
  private readonly expectedType: ExpectedType | undefined;
  private readonly backoff: Backoff;

  /** Where the next watch starts: the last list's resourceVersion, moved on by every event since. */
  private lastRV = '';
  /** A list has succeeded; later lists are re-lists. */
  private listedOnce = false;
  /** A watch delivered an event since the last successful list (decides whether a 410 re-lists at once). */
  private progressSinceList = false;
  private watching = false;
  private lastError: string | undefined;
  private consecutiveFailures = 0;
  private running = false;

  constructor(
    private readonly lw: ListerWatcher<T>,
    private readonly sink: ReflectorSink<T>,
    options: ReflectorOptions<T> = {},
  ) {
    this.clock = options.clock ?? realClock;
    this.logger = options.logger ?? nopLogger;
    this.metrics = options.metrics ?? nopInformerMetrics;
    this.random = options.random ?? Math.random;
    this.pageSize = options.pageSize ?? DEFAULT_PAGE_SIZE;
    this.minWatchTimeoutSeconds = options.minWatchTimeoutSeconds ?? DEFAULT_MIN_WATCH_TIMEOUT_SECONDS;
    this.inactivityTimeoutMs = options.inactivityTimeoutMs ?? DEFAULT_INACTIVITY_TIMEOUT_MS;
    this.transform = options.transform ?? ((obj) => obj);
    this.expectedType = options.expectedType;
    this.backoff = new Backoff({ clock: this.clock, random: this.random, ...options.backoff });
    if (!(this.pageSize >= 0)) throw new RangeError(`Reflector: pageSize must be >= 0, got ${this.pageSize}`);
    if (!(this.minWatchTimeoutSeconds >= 1))
      throw new RangeError(`Reflector: minWatchTimeoutSeconds must be >= 1, got ${this.minWatchTimeoutSeconds}`);
    if (!(this.inactivityTimeoutMs > 0))
      throw new RangeError(`Reflector: inactivityTimeoutMs must be > 0, got ${this.inactivityTimeoutMs}`);
  }

  get status(): ReflectorStatus {
    return {
      watching: this.watching,
      lastSyncResourceVersion: this.lastRV,
      lastError: this.lastError,
      consecutiveFailures: this.consecutiveFailures,
    };
  }

  /** Lists and watches until signal aborts; rejects only when the transform or the sink throws. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error('Reflector: run() called twice');
    this.running = true;
    let mustList = true;
    while (!signal.aborted) {
      let phase: 'list' | 'watch' = mustList ? 'list' : 'watch';
      try {
        if (mustList) {
          await this.listAndReplace(signal);
          mustList = false;
          phase = 'watch';
        }
        const ended = await this.watchOnce(signal);
        if (ended === 'inactive') this.metrics.watchError('inactive');
        continue;
      } catch (err) {
        if (err instanceof SinkFailure) throw err.cause;
        if (signal.aborted) break;
        this.consecutiveFailures++;
        this.lastError = describeError(err);
        if (phase === 'list') {
          this.metrics.listError();
          this.logger.warn('list failed; will retry after backoff', { error: this.lastError, failures: this.consecutiveFailures });
        } else if (isGone(err)) {
          this.metrics.watchError('gone');
          mustList = true;
          if (this.progressSinceList) {
            this.logger.info('watch resourceVersion expired (410); re-listing', { resourceVersion: this.lastRV });
            continue;
          }
          this.logger.warn('watch from a fresh list got 410 at once; re-listing after backoff', { resourceVersion: this.lastRV });
        } else if (err instanceof UndecodableEventError) {
          this.metrics.watchError('undecodable');
          this.logger.warn('watch event could not be decoded; will re-watch from the last applied resourceVersion after backoff', {
            reason: err.reason,
            resourceVersion: this.lastRV,
            failures: this.consecutiveFailures,
          });
        } else {
          this.metrics.watchError(err instanceof ShortWatchError ? 'short' : 'error');
          this.logger.warn('watch failed; will re-watch after backoff', { error: this.lastError, failures: this.consecutiveFailures });
        }
      }
      try {
        await this.backoff.wait(signal);
      } catch {
        break; // aborted while waiting
      }
    }
    this.logger.debug('stopped');
  }

  /** Fetches every page, then hands the complete list to the sink. */
  private async listAndReplace(signal: AbortSignal): Promise<void> {
    if (this.listedOnce) this.metrics.relist();
    const items: T[] = [];
    let token: string | undefined;
    let resourceVersion = '';
    let pages = 0;
    let restarted = false;
    for (;;) {
      this.metrics.listRequest();
      // Items of this page, trimmed as they are decoded; kept apart until the page is complete.
      const pageItems: T[] = [];
      let transformFailure: { error: unknown } | undefined;
      const accept = (item: unknown): void => {
        if (transformFailure) return;
        const malformed = malformedObject(item, this.expectedType);
        if (malformed) return this.skip(malformed, 'list', item);
        try {
          pageItems.push(this.transform(item as T));
        } catch (err) {
          transformFailure = { error: err };
        }
      };
      let page;
      try {
        page = await this.lw.list({ limit: this.pageSize || undefined, continue: token }, signal, accept);
      } catch (err) {
        if (transformFailure) throw new SinkFailure(transformFailure.error);
        if (token !== undefined && isGone(err) && !restarted && !signal.aborted) {
          // The continue token outlived its snapshot (etcd compaction): start over, once.
          this.logger.info('list continue token expired; restarting the list', { pages });
          restarted = true;
          items.length = 0;
          token = undefined;
          pages = 0;
          continue;
        }
        throw err;
      }
      pages++;
      for (const obj of page.items) accept(obj);
      if (transformFailure) throw new SinkFailure(transformFailure.error);
      for (const obj of pageItems) items.push(obj);
      resourceVersion = page.resourceVersion;
      if (!page.continue) break;
      token = page.continue;
    }
    try {
      this.sink.replace(items, resourceVersion);
    } catch (err) {
      throw new SinkFailure(err);
    }
    this.lastRV = resourceVersion;
    this.listedOnce = true;
    this.progressSinceList = false;
    this.consecutiveFailures = 0;
    this.logger.debug('listed', { items: items.length, pages, resourceVersion });
  }

  /**
   * One watch from lastRV until it ends. Resolves 'ended' when the server closed it (or run's
   * signal aborted), 'inactive' when the watchdog cut it; rejects with the watch's error, a
   * ShortWatchError, an UndecodableEventError, or a SinkFailure.
   */
  private async watchOnce(signal: AbortSignal): Promise<'ended' | 'inactive'> {
    const stop = new AbortController();
    const onAbort = (): void => stop.abort(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const startedAt = this.clock.now();
    let lastActivity = startedAt;
    let events = 0;
    let inactive = false;
    let failure: { error: unknown } | undefined;

    // One timer per inactivity period, not one per event: on firing it re-arms for the time left.
    let watchdog: Timer | undefined;
    const arm = (ms: number): void => {
      watchdog = this.clock.setTimer(ms, () => {
        const idle = this.clock.now() - lastActivity;
        if (idle < this.inactivityTimeoutMs) return arm(this.inactivityTimeoutMs - idle);
        watchdog = undefined;
        inactive = true;
        this.logger.warn('watch silent too long; re-watching', { idleMs: idle, resourceVersion: this.lastRV });
        stop.abort(new Error(`watch inactive for ${idle} ms`));
      });
    };
    arm(this.inactivityTimeoutMs);

    const onEvent = (event: WatchEvent<T>): void => {
      if (failure || stop.signal.aborted) return; // a late event from a stream we already gave up on
      lastActivity = this.clock.now();
      const malformed = malformedWatchEvent(event, this.expectedType);
      if (malformed && endsWatch(malformed)) {
        // Never logged: a line that did not decode may hold anything, a Secret's data included.
        this.metrics.malformedEvent(malformed);
        failure = { error: new UndecodableEventError(malformed) };
        stop.abort(failure.error);
        return;
      }
      if (malformed) return this.skip(malformed, 'watch', event?.object, event?.type);
      if (event.type === 'ERROR') {
        failure = { error: watchEventError(event.object) };
        stop.abort(failure.error);
        return;
      }
      events++;
      this.progressSinceList = true;
      this.consecutiveFailures = 0;
      try {
        this.deliver(event);
      } catch (err) {
        failure = { error: new SinkFailure(err) };
        stop.abort(err);
      }
    };

    const timeoutSeconds = Math.floor(this.minWatchTimeoutSeconds * (1 + this.random()));
    this.metrics.watchStarted();
    this.watching = true;
    this.logger.debug('watching', { resourceVersion: this.lastRV, timeoutSeconds });
    try {
      await this.lw.watch({ resourceVersion: this.lastRV, timeoutSeconds, allowWatchBookmarks: true }, onEvent, stop.signal);
    } catch (err) {
      // After we aborted, a rejection is only the abort coming back.
      if (!failure && !stop.signal.aborted) failure = { error: err };
    } finally {
      watchdog?.cancel();
      signal.removeEventListener('abort', onAbort);
      this.watching = false;
    }
    if (failure) throw failure.error;
    if (signal.aborted) return 'ended';
    if (inactive) return 'inactive';
    if (events === 0 && this.clock.now() - startedAt < SHORT_WATCH_MS) {
      throw new ShortWatchError('watch ended at once without any event');
    }
    return 'ended';
  }

  /** Only sound events (malformedWatchEvent found nothing) come here. */
  private deliver(event: WatchEvent<T>): void {
    if (event.type === 'ERROR' || event.type === 'UNPARSEABLE') return;
    const rv = event.object.metadata?.resourceVersion;
    if (event.type === 'BOOKMARK') {
      if (typeof rv === 'string' && rv) this.lastRV = rv;
      return;
    }
    this.sink.apply(event.type, this.transform(event.object));
    if (typeof rv === 'string' && rv) this.lastRV = rv;
  }

  /**
   * Logs and counts a malformed event or item. The log names what it can (type, kind, name:
   * short strings) but never the object itself, which may be large or hold what a log must not.
   */
  private skip(reason: MalformedReason, from: 'list' | 'watch', object: unknown, type?: unknown): void {
    this.metrics.malformedEvent(reason);
    const o = (typeof object === 'object' && object !== null ? object : {}) as { kind?: unknown; metadata?: { name?: unknown } };
    const short = (v: unknown): string | undefined => (typeof v === 'string' ? v.slice(0, 253) : undefined);
    this.logger.warn(`skipping a malformed ${from === 'list' ? 'listed item' : 'watch event'}`, {
      reason,
      ...(from === 'watch' ? { type: short(type) } : {}),
      kind: short(o.kind),
      name: short(typeof o.metadata === 'object' && o.metadata !== null ? o.metadata.name : undefined),
    });
  }
}
