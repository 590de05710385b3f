/**
 * WorkQueue: the queue between a controller's event handlers and its workers, with the
 * guarantees of client-go's workqueue.
 *
 *  - Dedup: a key is queued at most once, however often it is added before a worker takes it;
 *    controllers reconcile to the latest state, so one pass covers every add before it.
 *  - Exclusivity: a key handed to a worker is never handed to a second one until done(key),
 *    so two reconciles of the same object never run at once.
 *  - No lost wake-up: a key added while it is being processed is queued again by done(key).
 *  - Order: by priority, then in turns across namespaces, then oldest first, with aging so that
 *    no key starves (fair.ts states the rules and the bound). An add may raise a waiting key's
 *    priority, never lower it; a key re-added while in flight is queued by done() with the
 *    highest priority it was added with meanwhile. Any number of workers may await get() at once
 *    (served in the order they asked).
 *
 * Shutting down stops adds. shutDown() is immediate: from then on get() resolves undefined,
 * and keys still queued are abandoned. shutDownWithDrain() keeps handing out the keys already
 * queued and resolves once nothing is queued or in flight, or when its timeout passes.
 *
 * Hand-written because no maintained npm package offers a Kubernetes-style workqueue:
 * @kubernetes/client-node has informers but no workqueue, and general job queues lack the
 * dirty/processing split that gives dedup and per-key exclusivity together.
 *
 * Keys are strings because dedup relies on Map identity, which for strings is value equality.
 */
import { LONGEST_TIMER_MS, realClock, type Clock, type Timer } from '../clock.js';
import { DEFAULT_PRIORITY, FairReadySet, type FairReadySetOptions } from './fair.js';
import { Fifo } from './fifo.js';
import { noopWorkQueueMetrics, type InFlightWork, type WorkQueueMetrics, type WorkQueueMetricsProvider } from './metrics.js';

export interface WorkQueueOptions<K extends string = string> {
  /** Labels the queue's metrics; a queue without a name reports none, as it cannot be told apart. */
  name?: string;
  clock?: Clock;
  metrics?: WorkQueueMetricsProvider;
  /** The order keys are handed out in: partitions (default: namespaces) and aging; see fair.ts. */
  order?: FairReadySetOptions<K>;
}

/** A key handed to a worker; an object so that undefined alone can mean "shut down". */
export interface WorkItem<K extends string> {
  readonly key: K;
  /** The priority it was queued with, for a requeue that keeps it (controller-runtime's GetWithPriority). */
  readonly priority: number;
}

/** A key that needs a (further) pass: since when, and the highest priority it was added with. */
interface Dirty {
  readonly since: number;
  priority: number;
}

type Waiter<K extends string> = (item: WorkItem<K> | undefined) => void;

/** Re-exported from the clock, which caps every timer at it. */
export { LONGEST_TIMER_MS };

interface Drain {
  readonly promise: Promise<boolean>;
  readonly resolve: (drained: boolean) => void;
  readonly timer: Timer | undefined;
}

export class WorkQueue<K extends string = string> {
  protected readonly clock: Clock;
  protected readonly metrics: WorkQueueMetrics;

  /**
   * Keys ready to be handed out, in hand-out order. Every queued key is dirty and not processing,
   * is queued once, and has the priority its dirty entry has.
   */
  private readonly queue: FairReadySet<K>;
  /**
   * Keys that need a (further) pass, each with the time it became dirty (queue latency, aging) and
   * its priority. Holds every queued key, plus keys re-added while processing, which done() queues.
   */
  private readonly dirty = new Map<K, Dirty>();
  /** How many dirty keys have each priority, for the depth gauge; a count of 0 is kept to report it. */
  private readonly depthByPriority = new Map<number, number>();
  /** Keys handed out and not yet done, each with the time it was handed out. None is queued. */
  private readonly processing = new Map<K, number>();
  /** Workers awaiting get(), oldest first. Non-empty only while nothing is queued and the queue is running. */
  private readonly waiters = new Fifo<Waiter<K>>();
  /** running -> draining -> stopped, or running -> stopped; never back. Adds are accepted only while running. */
  private state: 'running' | 'draining' | 'stopped' = 'running';
  /** Set by the first shutDownWithDrain; kept once settled so later calls get the same answer. */
  private drain: Drain | undefined;

  constructor(options: WorkQueueOptions<K> = {}) {
    this.clock = options.clock ?? realClock;
    this.queue = new FairReadySet<K>(options.order);
    const provider = options.name ? (options.metrics ?? noopWorkQueueMetrics) : noopWorkQueueMetrics;
    this.metrics = provider.forQueue(options.name ?? '', () => this.unfinishedWork());
  }

  /**
   * Marks key as needing processing, at `priority` (default 0; higher goes first). When it already
   * waits, only raises its priority if this one is higher. A no-op once shutting down.
   */
  add(key: K, priority: number = DEFAULT_PRIORITY): void {
    if (this.state !== 'running') return;
    const waiting = this.dirty.get(key);
    if (waiting) {
      if (priority <= waiting.priority) return;
      this.countDepth(waiting.priority, -1);
      waiting.priority = priority;
      this.countDepth(priority, +1);
      this.queue.raise(key, priority);
      return;
    }
    const now = this.clock.now();
    this.dirty.set(key, { since: now, priority });
    this.metrics.incAdds();
    this.countDepth(priority, +1);
    // A key in flight stays out of the queue, so no second worker can take it; done() queues it.
    if (this.processing.has(key)) return;
    this.queue.push(key, priority, now);
    this.handOut();
  }

  /**
   * The next key, once one is available; undefined once shut down (in drain mode, once nothing
   * is left queued). The caller owns the key until it calls done(key).
   */
  get(): Promise<WorkItem<K> | undefined> {
    if (this.queue.length > 0 && this.state !== 'stopped') {
      return Promise.resolve(this.claim());
    }
    if (this.state !== 'running') return Promise.resolve(undefined);
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Ends processing of key; queues it again if it was re-added meanwhile. A no-op for a key not handed out. */
  done(key: K): void {
    const startedAt = this.processing.get(key);
    if (startedAt === undefined) return;
    this.processing.delete(key);
    this.metrics.observeWorkDuration((this.clock.now() - startedAt) / 1000);
    const dirty = this.dirty.get(key);
    if (dirty) {
      this.queue.push(key, dirty.priority, dirty.since);
      this.handOut();
    }
    if (this.state === 'draining' && this.isIdle()) this.stop();
  }

  /** Keys queued and ready to be handed out (not those held back behind their own processing). */
  len(): number {
    return this.queue.length;
  }

  get shuttingDown(): boolean {
    return this.state !== 'running';
  }

  /** Stops at once: adds are ignored, waiting and future get() calls resolve undefined, queued keys are abandoned. */
  shutDown(): void {
    this.stop();
  }

  /**
   * Stops accepting adds but keeps handing out the keys already queued; resolves true once
   * nothing is queued or in flight, or false if timeoutMs passes first (the queue then stops
   * as with shutDown()). Workers must keep calling done(). A timeout that is not finite, or too
   * long for a timer, waits without bound. Later calls return the first call's promise.
   */
  shutDownWithDrain(timeoutMs: number): Promise<boolean> {
    if (this.drain) return this.drain.promise;
    if (this.state === 'stopped') return Promise.resolve(this.isIdle());
    this.state = 'draining';
    // Waiters exist only while nothing is queued, and nothing new can be added now.
    this.wakeWaiters();
    let resolve!: (drained: boolean) => void;
    const promise = new Promise<boolean>((r) => (resolve = r));
    const bounded = Number.isFinite(timeoutMs) && timeoutMs <= LONGEST_TIMER_MS;
    const timer = bounded ? this.clock.setTimer(Math.max(0, timeoutMs), () => this.stop()) : undefined;
    this.drain = { promise, resolve, timer };
    if (this.isIdle()) this.stop();
    return promise;
  }

  /**
   * The gauges that grow with time, computed now: the in-flight ones walk the keys in flight; the
   * longest wait per priority walks the waiting keys (a scrape's worth of work, not a hot path).
   */
  unfinishedWork(): InFlightWork {
    const now = this.clock.now();
    let total = 0;
    let longest = 0;
    for (const startedAt of this.processing.values()) {
      const age = now - startedAt;
      total += age;
      if (age > longest) longest = age;
    }
    const longestWaiting = new Map<number, number>();
    for (const priority of this.depthByPriority.keys()) longestWaiting.set(priority, 0);
    for (const { since, priority } of this.dirty.values()) {
      const waited = (now - since) / 1000;
      if (waited > longestWaiting.get(priority)!) longestWaiting.set(priority, waited);
    }
    return { unfinishedWorkSeconds: total / 1000, longestRunningProcessorSeconds: longest / 1000, longestWaitingSeconds: longestWaiting };
  }

  /** Hands out the next queued key; call only when one is queued. */
  private claim(): WorkItem<K> {
    const now = this.clock.now();
    const { key, priority } = this.queue.shift(now)!;
    const since = this.dirty.get(key)?.since ?? now;
    this.dirty.delete(key);
    this.processing.set(key, now);
    this.metrics.observeQueueDuration((now - since) / 1000, priority);
    this.countDepth(priority, -1);
    return { key, priority };
  }

  private countDepth(priority: number, delta: number): void {
    const depth = (this.depthByPriority.get(priority) ?? 0) + delta;
    this.depthByPriority.set(priority, depth);
    this.metrics.setDepth(depth, priority);
  }

  /** Restores "waiters only while nothing is queued" after a key was queued. */
  private handOut(): void {
    while (this.waiters.length > 0 && this.queue.length > 0) {
      this.waiters.shift()(this.claim());
    }
  }

  private wakeWaiters(): void {
    while (this.waiters.length > 0) this.waiters.shift()(undefined);
  }

  private isIdle(): boolean {
    return this.queue.length === 0 && this.processing.size === 0;
  }

  /** The one way into "stopped": shutDown(), a finished drain, or a drain's timeout. */
  private stop(): void {
    if (this.state === 'stopped') return;
    this.state = 'stopped';
    this.wakeWaiters();
    if (this.drain) {
      this.drain.timer?.cancel();
      this.drain.resolve(this.isIdle());
    }
  }
}
