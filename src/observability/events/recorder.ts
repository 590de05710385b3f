/**
 * Kubernetes Events (core/v1) about the objects the operator manages, so `kubectl describe`
 * tells users what happened to their Echo.
 *
 * Guarantees:
 * - recordEvent() never blocks and never throws: it updates in-memory state and returns; a
 *   background writer sends Events in the order they were recorded, one at a time (client-go's
 *   single writer) unless it is behind (below); two writes of the same Event never overlap.
 * - Repeats are cheap for the API server: an event identical to one written in the last
 *   10 minutes (same object, type, reason, message) PATCHes that Event's count and
 *   lastTimestamp instead of creating another; identical events still waiting to be written are
 *   merged into one write; similar events are folded and every object has a token bucket (see
 *   correlation.ts), so a hot loop cannot flood the API server.
 * - Memory is bounded: at most queueSize distinct events wait (more are dropped and counted);
 *   correlation state forgets least recently used keys.
 * - Every event recorded is counted once it stops waiting, as written (by type) or as dropped
 *   (by reason, metrics.ts lists them): `metrics`, for echoperator_events_*_total.
 * - Transient failures (no answer, 429, 5xx) are retried: up to maxAttempts tries, retryIntervalMs
 *   apart (the first pause randomized so replicas do not retry in step); other failures drop the
 *   event with a log line, as client-go does. Events are best effort, never worth failing for.
 * - close() stops accepting and flushes with up to maxInFlight writes at a time (the API server's
 *   429s and Retry-After pace them, see RestClient) for up to its budget, then abandons what is
 *   left; it logs how many it wrote and, only when the budget ran out, how many it abandoned
 *   (counted as failed). It leaves no timer or request behind.
 * - Events yield to the work users wait for, but are never lost to it: while `busy()` says
 *   reconciles are queued, an Event is held back, at most maxHoldMs after it was recorded, and
 *   only while fewer than three quarters of queueSize events wait. A burst of new objects then
 *   gets its Jobs and statuses from a write-bound API server first (measured: 1,000 new Echos
 *   took 1.33 x a bare client's time with Events interleaved; see docs/benchmarks.md), and
 *   holding alone never fills the queue: past the hold limit Events go out as they come, by one
 *   writer at the limit and more as the queue nears its cap (maxInFlight there), so a writer
 *   slower than the reconciles catches up instead of dropping at the cap what controller-runtime,
 *   writing as it goes, would have written. It never has more writes in flight than it needs to
 *   keep up: each is one the reconciles' writes share the API server with (client-go's
 *   broadcaster has one writer, and drops at its cap instead).
 */
import {
  ApiError,
  type Clock,
  describeError,
  type EventRecorder,
  type EventSubject,
  type EventType,
  isAlreadyExists,
  isNotFound,
  isTransient,
  type Logger,
  nopLogger,
  realClock,
} from '../../runtime/index.js';
import {
  COMBINED_PREFIX,
  LruMap,
  SimilarEventAggregator,
  SpamFilter,
  type AggregatorOptions,
  type SpamFilterOptions,
} from './correlation.js';
import type { CoreEvent, EventSink } from './sink.js';
import { nopEventRecorderMetrics, type EventDropReason, type EventRecorderMetrics } from './metrics.js';

/** The recorder the operator runs: events go out in the background, so they can be flushed and closed. */
export interface BackgroundEventRecorder extends EventRecorder {
  /** Resolves true once everything recorded so far was written (or given up), false on timeout. */
  flush(timeoutMs?: number): Promise<boolean>;
  /** Stops accepting events, flushes for up to timeoutMs, then abandons the rest. Idempotent. */
  close(timeoutMs?: number): Promise<void>;
}

export interface EventRecorderOptions {
  sink: EventSink;
  /** source.component and reportingComponent; default "echoperator". */
  component?: string;
  /** reportingInstance (at most 128 characters): which replica wrote it, e.g. HA_NODE_ID. */
  instance?: string;
  /** Monotonic time for windows, buckets and retry pauses. */
  clock?: Clock;
  /** Wall time for timestamps and Event names. */
  wallClock?: () => Date;
  logger?: Logger;
  /**
   * Distinct events waiting to be written at most; default 1000 (client-go's queue length).
   * Events are held back only while fewer than three quarters of this many wait.
   */
  queueSize?: number;
  /** Writes in flight at most while behind (near the cap) or closing; default 8. */
  maxInFlight?: number;
  /** Default 12 (client-go's maxTriesPerEvent). */
  maxAttempts?: number;
  /** Default 10000 (client-go's sleepDuration). */
  retryIntervalMs?: number;
  /** How long an identical event keeps patching the same Event; default 600000 (10 minutes). */
  dedupWindowMs?: number;
  spamFilter?: SpamFilterOptions;
  aggregator?: AggregatorOptions;
  /** For the randomized first retry pause; default Math.random. */
  random?: () => number;
  /**
   * True while the operator has reconciles queued; Events wait meanwhile, while fewer than three
   * quarters of queueSize wait (default: never busy).
   */
  busy?: () => boolean;
  /** The longest an Event is held back while busy(); default 10000. */
  maxHoldMs?: number;
  /** Where occurrences written and dropped are counted; default nowhere. */
  metrics?: EventRecorderMetrics;
}

/** How often a held-back Event looks again whether the operator is still busy. */
const HOLD_POLL_MS = 100;

/**
 * What ends a hold early. Given to abort(), so that no DOMException is built per hold: a burst
 * that keeps the queue at the hold limit ends a hold for about every Event it records.
 */
const HOLD_ENDED = new Error('hold ended');

export interface EventRecorderStats {
  recorded: number;
  created: number;
  patched: number;
  /** Dropped by the per-object token bucket. */
  droppedSpam: number;
  /** Dropped because queueSize distinct events were already waiting. */
  droppedQueueFull: number;
  /** Given up: a permanent error, retries exhausted, or abandoned at close. */
  failed: number;
}

/** Messages longer than this are cut: events.k8s.io's limit, and plenty for a human. */
const MAX_MESSAGE = 1024;

interface Pending {
  key: string;
  namespace: string;
  involvedObject: CoreEvent['involvedObject'];
  type: EventType;
  reason: string;
  message: string;
  count: number;
  firstTimestamp: string;
  lastTimestamp: string;
  /** Monotonic time of the first and last occurrence merged into this write. */
  firstAt: number;
  lastAt: number;
}

interface Written {
  name: string;
  namespace: string;
  count: number;
  lastAt: number;
}

export class KubeEventRecorder implements BackgroundEventRecorder {
  private readonly sink: EventSink;
  private readonly component: string;
  private readonly instance: string;
  private readonly clock: Clock;
  private readonly wallClock: () => Date;
  private readonly logger: Logger;
  private readonly queueSize: number;
  /** Events are held back only while fewer than this many wait; from here on, writers are added. */
  private readonly holdLimit: number;
  private readonly maxInFlight: number;
  private readonly maxAttempts: number;
  private readonly retryIntervalMs: number;
  private readonly dedupWindowMs: number;
  private readonly random: () => number;
  private readonly busy: () => boolean;
  private readonly maxHoldMs: number;
  private readonly spam: SpamFilter;
  private readonly aggregator: SimilarEventAggregator;
  private readonly metrics: EventRecorderMetrics;
  /** Events already written, by identity: what an identical event patches. */
  private readonly written = new LruMap<string, Written>(4096);
  /** Waiting to be written, in recording order; identical events merge into one entry. */
  private readonly pending = new Map<string, Pending>();
  private readonly abort = new AbortController();
  private readonly counters: EventRecorderStats = { recorded: 0, created: 0, patched: 0, droppedSpam: 0, droppedQueueFull: 0, failed: 0 };
  private draining: Promise<void> | undefined;
  private closing: Promise<void> | undefined;
  /** Ends the current hold at once: the hold limit is reached, or the recorder is closing. */
  private endHold: (() => void) | undefined;
  private closed = false;
  private nameSeq = 0;
  private lastQueueFullLogAt = -Infinity;

  constructor(options: EventRecorderOptions) {
    this.sink = options.sink;
    this.component = options.component ?? 'echoperator';
    this.instance = (options.instance ?? this.component).slice(0, 128);
    this.clock = options.clock ?? realClock;
    this.wallClock = options.wallClock ?? (() => new Date());
    this.logger = options.logger ?? nopLogger;
    this.queueSize = options.queueSize ?? 1000;
    this.holdLimit = Math.max(1, Math.floor((this.queueSize * 3) / 4));
    this.maxInFlight = Math.max(1, options.maxInFlight ?? 8);
    this.maxAttempts = options.maxAttempts ?? 12;
    this.retryIntervalMs = options.retryIntervalMs ?? 10_000;
    this.dedupWindowMs = options.dedupWindowMs ?? 600_000;
    this.random = options.random ?? Math.random;
    this.busy = options.busy ?? (() => false);
    this.maxHoldMs = options.maxHoldMs ?? 10_000;
    this.spam = new SpamFilter(options.spamFilter);
    this.aggregator = new SimilarEventAggregator(options.aggregator);
    this.metrics = options.metrics ?? nopEventRecorderMetrics;
  }

  get stats(): Readonly<EventRecorderStats> {
    return { ...this.counters };
  }

  recordEvent(object: EventSubject, type: EventType, reason: string, message: string): void {
    try {
      this.record(object, type, reason, message);
    } catch (err) {
      this.metrics.dropped('internal_error', 1);
      this.logger.error('recording an event failed', { reason, error: err });
    }
  }

  flush(timeoutMs = 5_000): Promise<boolean> {
    const done = this.idle();
    return new Promise<boolean>((resolve) => {
      const timer = this.clock.setTimer(timeoutMs, () => resolve(false));
      void done.then(() => {
        timer.cancel();
        resolve(true);
      });
    });
  }

  close(timeoutMs = 5_000): Promise<void> {
    this.closing ??= this.shutDown(timeoutMs);
    return this.closing;
  }

  private async shutDown(budgetMs: number): Promise<void> {
    this.closed = true;
    this.endHold?.();
    const writes = (): number => this.counters.created + this.counters.patched;
    const writesBefore = writes();
    const failedBefore = this.counters.failed;
    const startedAt = this.clock.now();
    const done = await this.flush(budgetMs);
    if (!done) {
      // What is still waiting, and the writes still in flight (they count themselves as failed).
      this.abort.abort(new Error('event recorder closed'));
      this.counters.failed += this.pending.size;
      for (const item of this.pending.values()) this.metrics.dropped('shutdown', item.count);
      this.pending.clear();
      await this.idle();
    }
    const fields = {
      flushed: writes() - writesBefore,
      created: this.counters.created,
      patched: this.counters.patched,
      ms: Math.round(this.clock.now() - startedAt),
      budgetMs,
      ...(this.counters.droppedQueueFull ? { droppedQueueFull: this.counters.droppedQueueFull } : {}),
    };
    if (done) this.logger.info('event recorder closed: every event written', fields);
    else
      this.logger.warn('event recorder closed before all events were written', {
        ...fields,
        abandoned: this.counters.failed - failedBefore,
      });
  }

  private record(object: EventSubject, type: EventType, reason: string, message: string): void {
    if (this.closed) {
      this.metrics.dropped('shutdown', 1);
      this.logger.debug('event dropped: the recorder is closed', { reason });
      return;
    }
    const meta = object.metadata ?? {};
    if (!meta.name || !object.kind) {
      this.metrics.dropped('invalid_object', 1);
      this.logger.warn('event dropped: the object has no kind or name', { reason, message });
      return;
    }
    this.counters.recorded++;
    const now = this.clock.now();
    const involvedObject: CoreEvent['involvedObject'] = {
      apiVersion: object.apiVersion ?? '',
      kind: object.kind,
      name: meta.name,
      ...(meta.namespace ? { namespace: meta.namespace } : {}),
      ...(meta.uid ? { uid: meta.uid } : {}),
      ...(meta.resourceVersion ? { resourceVersion: meta.resourceVersion } : {}),
    };
    const objectKey = [involvedObject.apiVersion, involvedObject.kind, meta.namespace ?? '', meta.name, meta.uid ?? ''].join('\u0000');
    const fields = { kind: object.kind, namespace: meta.namespace, name: meta.name, type, reason };
    if (!this.spam.allow(objectKey, now)) {
      this.counters.droppedSpam++;
      this.metrics.dropped('spam_filter', 1);
      this.logger.debug('event dropped by the per-object rate limit', fields);
      return;
    }
    const groupKey = `${objectKey}\u0000${type}\u0000${reason}`;
    const folded = this.aggregator.aggregate(groupKey, truncate(message, MAX_MESSAGE - COMBINED_PREFIX.length), now);
    // A combined event is one Event per group, whatever its latest message says.
    const key = folded.combined ? groupKey : `${groupKey}\u0000${folded.message}`;
    const timestamp = toMetaTime(this.wallClock());
    this.logger.debug('event', { ...fields, message: folded.message });

    const waiting = this.pending.get(key);
    if (waiting) {
      waiting.count++;
      waiting.message = folded.message;
      waiting.lastTimestamp = timestamp;
      waiting.lastAt = now;
      waiting.involvedObject = involvedObject;
      return;
    }
    if (this.pending.size >= this.queueSize) {
      this.counters.droppedQueueFull++;
      this.metrics.dropped('queue_full', 1);
      if (now - this.lastQueueFullLogAt >= 60_000) {
        this.lastQueueFullLogAt = now;
        this.logger.warn('event dropped: too many events waiting to be written', { ...fields, queueSize: this.queueSize });
      }
      return;
    }
    this.pending.set(key, {
      key,
      namespace: meta.namespace || 'default',
      involvedObject,
      type,
      reason,
      message: folded.message,
      count: 1,
      firstTimestamp: timestamp,
      lastTimestamp: timestamp,
      firstAt: now,
      lastAt: now,
    });
    if (this.pending.size >= this.holdLimit) this.endHold?.();
    this.draining ??= this.drain();
  }

  /** Resolves when nothing is waiting or being written. */
  private async idle(): Promise<void> {
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    // Start on a later microtask: recordEvent() then never runs sink code, and the events
    // recorded in the same synchronous stretch are merged before the first write.
    await Promise.resolve();
    /** Writes in flight, by event key. */
    const writing = new Map<string, Promise<void>>();
    try {
      for (;;) {
        const next = this.nextToWrite(writing);
        if (!next) {
          if (writing.size === 0) return;
          await Promise.race(writing.values());
          continue;
        }
        // Still in `pending` while held: identical events recorded meanwhile merge into it.
        await this.holdWhileBusy(next);
        if (this.pending.get(next.key) !== next) continue; // abandoned by close() meanwhile
        if (writing.size >= this.writersAllowed()) {
          await Promise.race(writing.values());
          continue;
        }
        this.pending.delete(next.key);
        const write = this.write(next)
          .catch((err: unknown) => {
            this.metrics.dropped('internal_error', next.count);
            this.logger.error('event writer failed', { error: err });
          })
          .finally(() => writing.delete(next.key));
        writing.set(next.key, write);
      }
    } catch (err) {
      this.logger.error('event writer failed', { error: err });
    } finally {
      await Promise.allSettled(writing.values());
      this.draining = undefined;
    }
  }

  /** The oldest waiting event whose previous write is not still in flight. */
  private nextToWrite(writing: ReadonlyMap<string, unknown>): Pending | undefined {
    for (const item of this.pending.values()) if (!writing.has(item.key)) return item;
    return undefined;
  }

  /**
   * One writer, as client-go has; while closing, maxInFlight; past the hold limit, more in
   * proportion to how far past it the queue is (maxInFlight at the cap), so the writers grow with
   * how far behind they are and the queue does not overflow, without a burst of writes the moment
   * the limit is reached.
   */
  private writersAllowed(): number {
    if (this.closed) return this.maxInFlight;
    const past = this.pending.size - this.holdLimit;
    if (past < 0) return 1;
    const room = Math.max(1, this.queueSize - this.holdLimit);
    return Math.min(this.maxInFlight, 1 + Math.floor((past * this.maxInFlight) / room));
  }

  /**
   * Returns once the operator is not busy, the item was held maxHoldMs, the hold limit is
   * reached, or the recorder is closing.
   */
  private async holdWhileBusy(item: Pending): Promise<void> {
    const signal = this.abort.signal;
    for (;;) {
      const left = this.maxHoldMs - (this.clock.now() - item.firstAt);
      if (this.closed || signal.aborted || left <= 0 || this.pending.size >= this.holdLimit || !this.busy()) return;
      // Woken early by endHold (close() calls it before it aborts `signal`); no AbortSignal.any
      // per poll, which older Node versions keep alive on the long-lived signal.
      const wake = new AbortController();
      this.endHold = () => wake.abort(HOLD_ENDED);
      await this.clock.sleep(Math.min(HOLD_POLL_MS, left), wake.signal).catch(() => undefined);
      this.endHold = undefined;
    }
  }

  private async write(item: Pending): Promise<void> {
    let previous = this.written.get(item.key);
    if (previous && item.firstAt - previous.lastAt > this.dedupWindowMs) previous = undefined;
    let name = previous?.name ?? this.eventName(item.involvedObject.name);
    const signal = this.abort.signal;
    for (let attempt = 1; ; attempt++) {
      try {
        if (previous) {
          const count = previous.count + item.count;
          await this.sink.patch(
            previous.namespace,
            previous.name,
            { count, lastTimestamp: item.lastTimestamp, message: item.message },
            signal,
          );
          this.written.set(item.key, { name: previous.name, namespace: previous.namespace, count, lastAt: item.lastAt });
          this.counters.patched++;
        } else {
          await this.sink.create(this.toEvent(item, name), signal);
          this.written.set(item.key, { name, namespace: item.namespace, count: item.count, lastAt: item.lastAt });
          this.counters.created++;
        }
        this.metrics.written(item.type, item.count);
        return;
      } catch (err) {
        if (signal.aborted) return this.failed(item, 'shutdown');
        if (previous && isNotFound(err)) {
          // The Event expired (the API server keeps them for an hour by default): start a new one.
          previous = undefined;
          name = this.eventName(item.involvedObject.name);
          attempt--;
          continue;
        }
        // A name taken already (two writes in the same nanosecond slot): retry at once, renamed.
        const nameTaken = !previous && isAlreadyExists(err);
        if (nameTaken) name = this.eventName(item.involvedObject.name);
        if (!(nameTaken || isTransient(err)) || attempt >= this.maxAttempts) {
          this.failed(item, isTransient(err) ? 'retries_exhausted' : 'rejected');
          this.logger.warn('event not written', {
            kind: item.involvedObject.kind,
            namespace: item.involvedObject.namespace,
            name: item.involvedObject.name,
            reason: item.reason,
            attempts: attempt,
            error: describeError(err),
            code: err instanceof ApiError ? err.code : undefined,
          });
          return;
        }
        if (nameTaken) continue;
        const pause = attempt === 1 ? this.random() * this.retryIntervalMs : this.retryIntervalMs;
        try {
          await this.clock.sleep(pause, signal);
        } catch {
          return this.failed(item, 'shutdown');
        }
      }
    }
  }

  /** Gives `item` up: counted in stats.failed and, by its occurrences, as dropped for `reason`. */
  private failed(item: Pending, reason: EventDropReason): void {
    this.counters.failed++;
    this.metrics.dropped(reason, item.count);
  }

  private toEvent(item: Pending, name: string): CoreEvent {
    return {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name, namespace: item.namespace },
      involvedObject: item.involvedObject,
      type: item.type,
      reason: item.reason,
      message: item.message,
      source: { component: this.component },
      firstTimestamp: item.firstTimestamp,
      lastTimestamp: item.lastTimestamp,
      count: item.count,
      reportingComponent: this.component,
      reportingInstance: this.instance,
    };
  }

  /**
   * client-go's naming, <object name>.<hex nanoseconds>, with a sequence number in the low digits
   * because the wall clock here has millisecond resolution.
   */
  private eventName(objectName: string): string {
    const nanos = BigInt(this.wallClock().getTime()) * 1_000_000n + BigInt(this.nameSeq++ % 1_000_000);
    const base = objectName.slice(0, 253 - 18).replace(/[^a-z0-9]+$/, '');
    return `${base || 'object'}.${nanos.toString(16)}`;
  }
}

function truncate(s: string, max: number): string {
  return s.length <= max ? s : `${s.slice(0, max - 3)}...`;
}

/** metav1.Time's wire format: RFC 3339 in UTC with whole seconds. */
function toMetaTime(d: Date): string {
  return d.toISOString().replace(/\.\d+Z$/, 'Z');
}
