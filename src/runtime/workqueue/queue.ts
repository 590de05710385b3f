/**
 * WorkQueue: the queue between a controller's event handlers and its workers, with the
 * guarantees of client-go's workqueue.
 *
 *  - Dedup: a key is queued at most once, however often it is added before a worker takes it;
 *    controllers reconcile to the latest state, so one pass covers every add before it.
 *  - Exclusivity: a key handed to a worker is never handed to a second one until done(key),
 *    so two reconciles of the same object never run at once.
 *  - No lost wake-up: a key added while it is being processed is queued again by done(key).
 *  - Otherwise FIFO, and any number of workers may await get() at once (served oldest first).
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
import { noopWorkQueueMetrics, type InFlightWork, type WorkQueueMetrics, type WorkQueueMetricsProvider } from './metrics.js';

export interface WorkQueueOptions {
  /** Labels the queue's metrics; a queue without a name reports none, as it cannot be told apart. */
  name?: string;
  clock?: Clock;
  metrics?: WorkQueueMetricsProvider;
}

/** A key handed to a worker; an object so that undefined alone can mean "shut down". */
export interface WorkItem<K extends string> {
  readonly key: K;
}

type Waiter<K extends string> = (item: WorkItem<K> | undefined) => void;

/** Re-exported from the clock, which caps every timer at it. */
export { LONGEST_TIMER_MS };

/**
 * A FIFO with O(1) push and amortised O(1) shift: Array.shift is O(n), which a queue of
 * 10,000+ keys cannot afford on every get().
 */
class Fifo<T> {
  /** Slots before `head` are consumed and cleared, so the values they held can be collected. */
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The oldest item; call only when length > 0. */
  shift(): T {
    const item = this.items[this.head] as T;
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      // Compact once the consumed prefix is at least half the array: each consumed slot pays
      // for at most one move, and memory stays within twice the live items.
      this.items.copyWithin(0, this.head);
      this.items.length -= this.head;
      this.head = 0;
    }
    return item;
  }
}

interface Drain {
  readonly promise: Promise<boolean>;
  readonly resolve: (drained: boolean) => void;
  readonly timer: Timer | undefined;
}

export class WorkQueue<K extends string = string> {
  protected readonly clock: Clock;
  protected readonly metrics: WorkQueueMetrics;

  /** Keys ready to be handed out, oldest first. Every queued key is dirty and not processing, and is queued once. */
  private readonly queue = new Fifo<K>();
  /**
   * Keys that need a (further) pass, each with the time it became dirty, for queue latency.
   * Holds every queued key, plus keys re-added while processing, which done() queues.
   * A Map rather than a Set plus a side table of times: one lookup and one entry per key.
   */
  private readonly dirty = new Map<K, number>();
  /** Keys handed out and not yet done, each with the time it was handed out. None is queued. */
  private readonly processing = new Map<K, number>();
  /** Workers awaiting get(), oldest first. Non-empty only while nothing is queued and the queue is running. */
  private readonly waiters = new Fifo<Waiter<K>>();
  /** running -> draining -> stopped, or running -> stopped; never back. Adds are accepted only while running. */
  private state: 'running' | 'draining' | 'stopped' = 'running';
  /** Set by the first shutDownWithDrain; kept once settled so later calls get the same answer. */
  private drain: Drain | undefined;

  constructor(options: WorkQueueOptions = {}) {
    this.clock = options.clock ?? realClock;
    const provider = options.name ? (options.metrics ?? noopWorkQueueMetrics) : noopWorkQueueMetrics;
    this.metrics = provider.forQueue(options.name ?? '', () => this.unfinishedWork());
  }

  /** Marks key as needing processing. A no-op when it already waits, or once shutting down. */
  add(key: K): void {
    if (this.state !== 'running' || this.dirty.has(key)) return;
    this.dirty.set(key, this.clock.now());
    this.metrics.incAdds();
    this.metrics.setDepth(this.dirty.size);
    // A key in flight stays out of the queue, so no second worker can take it; done() queues it.
    if (this.processing.has(key)) return;
    this.queue.push(key);
    this.handOut();
  }

  /**
   * The next key, once one is available; undefined once shut down (in drain mode, once nothing
   * is left queued). The caller owns the key until it calls done(key).
   */
  get(): Promise<WorkItem<K> | undefined> {
    if (this.queue.length > 0 && this.state !== 'stopped') {
      return Promise.resolve(this.claim(this.queue.shift()));
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
    if (this.dirty.has(key)) {
      this.queue.push(key);
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

  /** The in-flight gauges, computed now; walks only the keys in flight. */
  unfinishedWork(): InFlightWork {
    const now = this.clock.now();
    let total = 0;
    let longest = 0;
    for (const startedAt of this.processing.values()) {
      const age = now - startedAt;
      total += age;
      if (age > longest) longest = age;
    }
    return { unfinishedWorkSeconds: total / 1000, longestRunningProcessorSeconds: longest / 1000 };
  }

  private claim(key: K): WorkItem<K> {
    const now = this.clock.now();
    const addedAt = this.dirty.get(key) ?? now;
    this.dirty.delete(key);
    this.processing.set(key, now);
    this.metrics.observeQueueDuration((now - addedAt) / 1000);
    this.metrics.setDepth(this.dirty.size);
    return { key };
  }

  /** Restores "waiters only while nothing is queued" after a key was queued. */
  private handOut(): void {
    while (this.waiters.length > 0 && this.queue.length > 0) {
      this.waiters.shift()(this.claim(this.queue.shift()));
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
