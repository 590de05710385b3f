/**
 * DelayingQueue: a WorkQueue whose keys can also be added after a delay (requeue-after,
 * backoff), with client-go's semantics.
 *
 *  - A key waits at most once: adding a waiting key again keeps the earlier deadline, so a
 *    later, longer backoff never postpones a retry already due sooner.
 *  - A waiting key keeps the highest priority asked for it, and is added with it.
 *  - At its deadline a key is add()ed, so every WorkQueue guarantee (dedup, exclusivity)
 *    applies to it; keys due at the same moment are added in the order they were scheduled.
 *  - Waiting keys are not counted by len() nor in workqueue_depth, but in workqueue_delayed_depth;
 *    shutting down (either way) drops them and cancels the timer, since they would be adds the
 *    queue no longer accepts.
 *
 * One Clock timer serves all waiting keys, set for the earliest deadline: 10,000 pending
 * retries cost one timer and a heap, not 10,000 timers.
 *
 * Hand-written with the queue (see queue.ts): no maintained npm package offers a
 * Kubernetes-style workqueue.
 */
import type { Timer } from '../clock.js';
import { DEFAULT_PRIORITY } from './fair.js';
import { LONGEST_TIMER_MS, WorkQueue } from './queue.js';

interface WaitingKey<K> {
  readonly key: K;
  readyAt: number;
  /** The highest priority asked for the key while it waits. */
  priority: number;
  /** Scheduling order: breaks ties between equal deadlines so they stay FIFO. */
  readonly seq: number;
  /** Position in the heap's array, kept current so a deadline can be moved earlier in O(log n). */
  index: number;
}

function before<K>(a: WaitingKey<K>, b: WaitingKey<K>): boolean {
  return a.readyAt < b.readyAt || (a.readyAt === b.readyAt && a.seq < b.seq);
}

/** A binary min-heap of waiting keys by (readyAt, seq). */
class DeadlineHeap<K> {
  /** entries[i] is never before its parent entries[(i - 1) >> 1], and entries[i].index === i. */
  private readonly entries: WaitingKey<K>[] = [];

  peek(): WaitingKey<K> | undefined {
    return this.entries[0];
  }

  push(entry: WaitingKey<K>): void {
    entry.index = this.entries.length;
    this.entries.push(entry);
    this.siftUp(entry.index);
  }

  /** The earliest entry; call only when not empty. */
  pop(): WaitingKey<K> {
    const top = this.entries[0]!;
    const last = this.entries.pop()!;
    if (last !== top) {
      this.place(last, 0);
      this.siftDown(0);
    }
    return top;
  }

  /** Restores order after entry.readyAt moved earlier (it can only go towards the root). */
  movedEarlier(entry: WaitingKey<K>): void {
    this.siftUp(entry.index);
  }

  clear(): void {
    this.entries.length = 0;
  }

  private place(entry: WaitingKey<K>, index: number): void {
    this.entries[index] = entry;
    entry.index = index;
  }

  private siftUp(index: number): void {
    const entry = this.entries[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = this.entries[parentIndex]!;
      if (!before(entry, parent)) break;
      this.place(parent, index);
      index = parentIndex;
    }
    this.place(entry, index);
  }

  private siftDown(index: number): void {
    const entry = this.entries[index]!;
    const size = this.entries.length;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= size) break;
      const right = left + 1;
      const child = right < size && before(this.entries[right]!, this.entries[left]!) ? right : left;
      const childEntry = this.entries[child]!;
      if (!before(childEntry, entry)) break;
      this.place(childEntry, index);
      index = child;
    }
    this.place(entry, index);
  }
}

export class DelayingQueue<K extends string = string> extends WorkQueue<K> {
  /** Keys waiting for their deadline; holds exactly the entries of waitingByKey. */
  private readonly waiting = new DeadlineHeap<K>();
  /** Each waiting key once, with the earliest deadline asked for it. */
  private readonly waitingByKey = new Map<K, WaitingKey<K>>();
  /** Set iff a key is waiting; due at timerAt, no later than the earliest deadline. */
  private timer: Timer | undefined;
  private timerAt = Infinity;
  private nextSeq = 0;

  /**
   * Adds key, at `priority`, once delayMs has passed (at once when delayMs <= 0); an earlier
   * pending deadline for key wins, and so does a higher priority.
   */
  addAfter(key: K, delayMs: number, priority: number = DEFAULT_PRIORITY): void {
    if (this.shuttingDown) return;
    if (!(delayMs > 0)) {
      this.add(key, priority);
      return;
    }
    const readyAt = this.clock.now() + delayMs;
    const existing = this.waitingByKey.get(key);
    if (existing) {
      existing.priority = Math.max(existing.priority, priority);
      if (readyAt >= existing.readyAt) return;
      existing.readyAt = readyAt;
      this.waiting.movedEarlier(existing);
    } else {
      const entry: WaitingKey<K> = { key, readyAt, priority, seq: this.nextSeq++, index: -1 };
      this.waitingByKey.set(key, entry);
      this.waiting.push(entry);
      this.metrics.setDelayedDepth(this.waitingByKey.size);
    }
    this.arm();
  }

  override shutDown(): void {
    this.stopWaiting();
    super.shutDown();
  }

  override shutDownWithDrain(timeoutMs: number): Promise<boolean> {
    this.stopWaiting();
    return super.shutDownWithDrain(timeoutMs);
  }

  /** Keeps the timer due no later than the earliest deadline, and absent when nothing waits. */
  private arm(): void {
    const next = this.waiting.peek();
    if (next === undefined) {
      this.cancelTimer();
      return;
    }
    if (this.timer && this.timerAt <= next.readyAt) return;
    this.cancelTimer();
    const now = this.clock.now();
    const delay = Math.min(Math.max(0, next.readyAt - now), LONGEST_TIMER_MS);
    this.timerAt = now + delay;
    this.timer = this.clock.setTimer(delay, this.onTimer);
  }

  private readonly onTimer = (): void => {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.now();
    // A timer may fire early (capped at LONGEST_TIMER_MS, or a coarse real clock): only due keys go.
    for (let next = this.waiting.peek(); next !== undefined && next.readyAt <= now; next = this.waiting.peek()) {
      this.waiting.pop();
      this.waitingByKey.delete(next.key);
      this.add(next.key, next.priority);
    }
    this.metrics.setDelayedDepth(this.waitingByKey.size);
    this.arm();
  };

  private cancelTimer(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Infinity;
  }

  private stopWaiting(): void {
    this.cancelTimer();
    this.waiting.clear();
    this.waitingByKey.clear();
    this.metrics.setDelayedDepth(0);
  }
}
