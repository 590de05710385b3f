/**
 * Controller: event sources -> keys -> rate-limited work queue -> N workers -> Reconciler.
 *
 * Guarantees (from the work queue): a key is reconciled by at most one worker at a time; a key
 * changed while it is being reconciled is reconciled again afterwards; a failed key is retried
 * with per-key exponential backoff under an overall token bucket, forever (errors are never
 * dropped; the reconciler reports persistent failure in status); success forgets the backoff.
 * A TerminalError (terminal.ts) is the exception: retrying cannot cure it, so it is counted and
 * logged, its backoff forgotten, and the key waits for a change (or its recheckAfterMs).
 *
 * Event sources feed the queue from construction on, also while the workers are not running
 * (a standby replica): when this replica starts leading, every key that changed is already
 * queued and the caches are warm.
 */
import { randomUUID } from 'node:crypto';
import { realClock, type Clock } from '../clock.js';
import { nopLogger, type Logger } from '../log.js';
import {
  DEFAULT_PRIORITY,
  LOW_PRIORITY,
  newRateLimitingQueue,
  type FairReadySetOptions,
  type RateLimiter,
  type RateLimitingQueue,
  type WorkQueueMetricsProvider,
} from '../workqueue/index.js';
import { nopControllerMetrics, type ControllerMetrics } from './metrics.js';
import type { Reconciler } from './reconciler.js';
import { terminalErrorIn } from './terminal.js';
import type { Predicate } from './predicates.js';
import { controllerOwnerKey, objectKey, type EventSource, type KubeObject } from './sources.js';

export interface ControllerOptions {
  /** Names the controller in logs and metrics (controller-runtime's `controller` label). */
  name: string;
  /** Concurrent reconciles (different keys). */
  workers: number;
  clock?: Clock;
  logger?: Logger;
  metrics?: ControllerMetrics;
  queueMetrics?: WorkQueueMetricsProvider;
  rateLimiter?: RateLimiter;
  /** The queue's hand-out order (fairness partitions, aging); see workqueue/fair.ts. */
  order?: FairReadySetOptions<string>;
}

/**
 * The two ways a controller is stopped (controller-runtime's Start(ctx) and its graceful-shutdown
 * timeout): `stop` ends the taking of new work, after which in-flight reconciles get
 * drainTimeoutMs to finish; `abort` aborts in-flight reconciles at once (leadership lost), during
 * a drain or before one. Aborting `abort` alone does not stop the workers taking new work: a
 * caller that aborts also stops.
 */
export interface RunSignals {
  stop: AbortSignal;
  abort?: AbortSignal;
  drainTimeoutMs: number;
}

export class Controller {
  readonly name: string;
  readonly queue: RateLimitingQueue;
  private readonly workers: number;
  private readonly log: Logger;
  private readonly metrics: ControllerMetrics;
  private readonly clock: Clock;
  /** True from run() until its workers have all returned; run() is allowed once. */
  private started = false;
  /**
   * Keys whose latest reconcile ran below the default priority (a backlog item nobody waits for:
   * the initial list, a resync), with that priority. Their owned objects' changes, which that
   * reconcile mostly caused (its own Job's ADDED, the job controller's first status), are news
   * to nobody either: they keep the owner's priority instead of jumping ahead of the rest of the
   * backlog, so a restart's follow-up passes queue behind its first passes as they would in
   * FIFO order. A key reconciled at the default priority or above (a fresh create or change)
   * leaves the map, so a fresh object's runs stay fresh. Invariant: at most one entry per
   * primary; an entry goes when its key is reconciled at or above the default or its primary is
   * deleted.
   */
  private readonly backlogPriority = new Map<string, number>();

  constructor(
    options: ControllerOptions,
    private readonly reconciler: Reconciler,
  ) {
    this.name = options.name;
    this.workers = options.workers;
    this.clock = options.clock ?? realClock;
    this.log = (options.logger ?? nopLogger).child({ controller: options.name });
    this.metrics = options.metrics ?? nopControllerMetrics;
    this.queue = newRateLimitingQueue({
      name: options.name,
      clock: this.clock,
      rateLimiter: options.rateLimiter,
      metrics: options.queueMetrics,
      order: options.order,
    });
    this.metrics.setMaxConcurrency(this.name, this.workers);
  }

  /** Queues key at `priority` (default 0; higher goes first: see workqueue/fair.ts). */
  enqueue(key: string, priority: number = DEFAULT_PRIORITY): void {
    this.queue.add(key, priority);
  }

  /**
   * The primary resource: its events that pass `predicate` (default all) enqueue its key. What
   * nobody is waiting for goes behind fresh news (controller-runtime's
   * WithLowPriorityWhenUnchanged): objects of the initial list, and resyncs of unchanged objects.
   */
  watchPrimary<T extends KubeObject>(source: EventSource<T>, predicate?: Predicate<T>): this {
    return this.watch(source, (obj) => [objectKey(obj)], predicate, 'primary');
  }

  /**
   * Objects this controller creates: their events enqueue their controller owner, prioritised as
   * for the primary, and never above the priority the owner was last reconciled at when that was
   * below the default (see backlogPriority).
   */
  watchOwned<T extends KubeObject>(source: EventSource<T>, owner: { group: string; kind: string }, predicate?: Predicate<T>): this {
    return this.watch(
      source,
      (obj) => {
        const key = controllerOwnerKey(obj, owner.group, owner.kind);
        return key ? [key] : [];
      },
      predicate,
      'related',
    );
  }

  /**
   * Objects of another kind that this controller neither reconciles nor owns (controller-runtime's
   * Watches with EnqueueRequestsFromMapFunc): their events enqueue the keys `toKeys` maps them to,
   * capped at those keys' backlog priority as for owned objects.
   */
  watchMapped<T extends KubeObject>(source: EventSource<T>, toKeys: (obj: T) => string[], predicate?: Predicate<T>): this {
    return this.watch(source, toKeys, predicate, 'related');
  }

  /**
   * Every event `predicate` passes enqueues the keys of its object; an update, those of the old
   * object and the new one (an owned object moved from one owner to another wakes both). Events
   * of related objects (owned or mapped) keep a key's backlog priority.
   */
  private watch<T extends KubeObject>(
    source: EventSource<T>,
    keysOf: (obj: T) => string[],
    predicate: Predicate<T> = {},
    of: 'primary' | 'related',
  ): this {
    const enqueue = (obj: T, priority: number): void => {
      for (const key of keysOf(obj)) {
        this.enqueue(key, of === 'related' ? Math.min(priority, this.backlogPriority.get(key) ?? priority) : priority);
      }
    };
    source.addEventHandler({
      onAdd: (obj, isInInitialList) => {
        if (predicate.create?.(obj) ?? true) enqueue(obj, addPriority(isInInitialList));
      },
      onUpdate: (oldObj, newObj) => {
        if (!(predicate.update?.(oldObj, newObj) ?? true)) return;
        const priority = updatePriority(oldObj, newObj);
        enqueue(oldObj, priority);
        enqueue(newObj, priority);
      },
      onDelete: (obj) => {
        // A deleted primary's backlog priority goes with it (see backlogPriority).
        if (of === 'primary') for (const key of keysOf(obj)) this.backlogPriority.delete(key);
        if (predicate.delete?.(obj) ?? true) enqueue(obj, DEFAULT_PRIORITY);
      },
    });
    return this;
  }

  /**
   * Runs the workers until `signals.stop` aborts, then stops: no key is handed out any more (keys
   * still queued are left to the next leader or the next start, which re-list and queue every
   * object), in-flight reconciles get drainTimeoutMs to finish, then they are aborted.
   * `signals.abort` aborts in-flight reconciles at any time.
   */
  async run(signals: RunSignals): Promise<void> {
    if (this.started) throw new Error(`controller ${this.name}: run() may be called only once`);
    this.started = true;
    // What every reconcile sees: `abort`, or the drain deadline passing.
    const inFlight = new AbortController();
    const onAbort = (): void => inFlight.abort(signals.abort!.reason);
    if (signals.abort?.aborted) onAbort();
    else signals.abort?.addEventListener('abort', onAbort, { once: true });
    const workers = Promise.allSettled(Array.from({ length: this.workers }, () => this.worker(inFlight.signal)));
    this.log.info('workers started', { workers: this.workers });
    await new Promise<void>((resolve) => {
      if (signals.stop.aborted) resolve();
      else signals.stop.addEventListener('abort', () => resolve(), { once: true });
    });
    this.queue.shutDown();
    const drained = new AbortController();
    const finished = await Promise.race([
      workers.then(() => true),
      this.clock.sleep(signals.drainTimeoutMs, drained.signal).then(
        () => false,
        () => true,
      ),
    ]);
    drained.abort();
    if (!finished) {
      this.log.warn('in-flight reconciles did not finish in time; aborting them', { drainTimeoutMs: signals.drainTimeoutMs });
      inFlight.abort(new Error('shutdown deadline passed'));
    }
    await workers;
    signals.abort?.removeEventListener('abort', onAbort);
    this.log.info('workers stopped');
  }

  private async worker(inFlight: AbortSignal): Promise<void> {
    for (;;) {
      const item = await this.queue.get();
      if (!item) return;
      await this.process(item.key, item.priority, inFlight);
    }
  }

  private async process(key: string, priority: number, signal: AbortSignal): Promise<void> {
    const reconcileID = randomUUID();
    const slash = key.indexOf('/');
    const log = this.log.child(
      slash >= 0 ? { namespace: key.slice(0, slash), name: key.slice(slash + 1), reconcileID } : { name: key, reconcileID },
    );
    const started = this.clock.now();
    // Before the reconcile: the events its writes cause arrive while it runs.
    if (priority < DEFAULT_PRIORITY) this.backlogPriority.set(key, priority);
    else this.backlogPriority.delete(key);
    this.metrics.activeWorkers(this.name, 1);
    try {
      const outcome = await this.reconciler.reconcile(key, { log, signal, reconcileID });
      this.queue.forget(key);
      if (outcome?.requeueAfterMs !== undefined) {
        this.queue.addAfter(key, outcome.requeueAfterMs, outcome.priority ?? priority);
        this.metrics.reconciled(this.name, 'requeue_after', (this.clock.now() - started) / 1000);
      } else {
        this.metrics.reconciled(this.name, 'success', (this.clock.now() - started) / 1000);
      }
    } catch (err) {
      this.metrics.reconciled(this.name, 'error', (this.clock.now() - started) / 1000);
      const terminal = terminalErrorIn(err);
      if (signal.aborted) {
        log.debug('reconcile aborted', { reason: String(signal.reason) });
      } else if (terminal) {
        this.metrics.terminalError(this.name);
        // No backoff to remember: the next pass comes from a change, and starts afresh.
        this.queue.forget(key);
        const recheck = terminal.recheckAfterMs;
        log.error(
          recheck === undefined
            ? 'reconcile failed for good; not retried until the object changes'
            : 'reconcile failed for good; not retried until the object changes, or the recheck',
          { error: errorMessage(err), ...(recheck === undefined ? {} : { recheckAfterMs: recheck }) },
        );
        // A look nobody is waiting for: behind fresh news, as a resync is.
        if (recheck !== undefined) this.queue.addAfter(key, recheck, LOW_PRIORITY);
      } else {
        log.error('reconcile failed; will retry', { error: errorMessage(err), retries: this.queue.numRequeues(key) });
        this.queue.addRateLimited(key, priority);
      }
    } finally {
      this.metrics.activeWorkers(this.name, -1);
      this.queue.done(key);
    }
  }
}

function addPriority(isInInitialList: boolean | undefined): number {
  return isInInitialList ? LOW_PRIORITY : DEFAULT_PRIORITY;
}

/** A resync delivers an object unchanged (same resourceVersion): nobody waits for it. */
function updatePriority(oldObj: KubeObject, newObj: KubeObject): number {
  const rv = newObj.metadata?.resourceVersion;
  return oldObj === newObj || (rv !== undefined && rv === oldObj.metadata?.resourceVersion) ? LOW_PRIORITY : DEFAULT_PRIORITY;
}

function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
