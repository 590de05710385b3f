/**
 * FairReadySet: the keys a work queue is ready to hand out, and the order it hands them out in.
 *
 *  - Priority: a key with a higher priority goes first (controller-runtime's priority queue: 0 is
 *    the default, LOW_PRIORITY marks events nobody is waiting for, such as an informer's initial
 *    list and resyncs of unchanged objects). Raising a queued key's priority moves it up at once;
 *    a priority is never lowered while the key waits.
 *  - Fairness across partitions: within one priority, partitions (a key's namespace, by default)
 *    take turns, one key each, in round-robin; within a partition, keys go oldest first. A burst of
 *    keys in one namespace therefore delays a key of another namespace by at most one hand-out per
 *    partition that has keys waiting, whatever the size of the burst.
 *  - No starvation (aging): a key below the default priority that has waited `agingMs` since it
 *    was queued joins the aged class. While both have keys, the aged class and the highest
 *    priority that has keys take every other hand-out; within the aged class partitions take turns
 *    as above. So a low-priority key waits at most agingMs, then at most two hand-outs per aged key
 *    ahead of it in that round-robin, however many fresh keys keep arriving.
 *
 * Round-robin was chosen over deficit round-robin and shuffle sharding: every reconcile of this
 * operator costs about the same (one object, a few requests), so counting keys is counting work,
 * and the partitions (namespaces) are few enough to be listed, which makes exact turns cheaper
 * and easier to reason about than hashing them into shards.
 *
 * Costs: push, raise and shift are O(1) amortised (plus a sort of the distinct priorities, which
 * are a handful, when a new one first appears). Superseded slots are skipped lazily.
 *
 * Hand-written with the queue (see queue.ts): no maintained npm package offers a Kubernetes-style
 * workqueue, let alone one fair across namespaces.
 */
import { Fifo } from './fifo.js';

/** controller-runtime's handler.LowPriority: the initial list, resyncs, unchanged objects. */
export const LOW_PRIORITY = -100;
/** The priority of an add that names none. */
export const DEFAULT_PRIORITY = 0;
/** How long a key below the default priority waits before it is served as aged: see the header. */
export const DEFAULT_AGING_MS = 10_000;

/** The partition of a `namespace/name` key: its namespace; '' for a cluster-scoped key. */
export function namespaceOf(key: string): string {
  const slash = key.indexOf('/');
  return slash < 0 ? '' : key.slice(0, slash);
}

interface Entry<K> {
  readonly key: K;
  /** The level this entry is live in: a priority, or AGED. Only ever raised. */
  level: number;
  /** The priority the key was queued with (or raised to): what metrics and the worker see. */
  priority: number;
  /** When the key was queued: aging counts from here. */
  readonly since: number;
  /** False once handed out; its slots left in other levels are then skipped. */
  queued: boolean;
}

/** The aged class is a level above every priority in the ordering of `levels`, served by turns. */
const AGED = Number.POSITIVE_INFINITY;

/** One priority's keys: a FIFO per partition, and the partitions in turn order. */
class Level<K> {
  /** Each partition's slots, oldest first; a partition is listed here iff it is in `turns`. */
  private readonly partitions = new Map<string, Fifo<Entry<K>>>();
  /** Partitions whose FIFO is non-empty, the next to be served first. */
  private readonly turns = new Fifo<string>();
  /** Live entries in this level (slots of entries that moved up or were handed out are not counted). */
  live = 0;

  constructor(readonly value: number) {}

  push(partition: string, entry: Entry<K>): void {
    let fifo = this.partitions.get(partition);
    if (!fifo) {
      fifo = new Fifo<Entry<K>>();
      this.partitions.set(partition, fifo);
      this.turns.push(partition);
    }
    fifo.push(entry);
    this.live++;
  }

  /** The next live entry by turns; undefined when there is none. Call only when live > 0. */
  shift(): Entry<K> | undefined {
    while (this.turns.length > 0) {
      const partition = this.turns.shift();
      const fifo = this.partitions.get(partition)!;
      let found: Entry<K> | undefined;
      while (fifo.length > 0 && !found) {
        const slot = fifo.shift();
        if (slot.queued && slot.level === this.value) found = slot;
      }
      if (fifo.length > 0) this.turns.push(partition);
      else this.partitions.delete(partition);
      if (found) {
        this.live--;
        return found;
      }
    }
    return undefined;
  }
}

export interface FairReadySetOptions<K extends string> {
  /**
   * First in, first out, as client-go's workqueue: no priorities, no partitions, no aging (a
   * priority given is still reported back with the key). For comparison and for controllers that
   * need the strict order; default false.
   */
  fifo?: boolean;
  /** Keys of one partition share turns; default namespaceOf. */
  partition?: (key: K) => string;
  /** See the header; Infinity turns aging off. Default DEFAULT_AGING_MS. */
  agingMs?: number;
}

export class FairReadySet<K extends string> {
  private readonly partition: (key: K) => string;
  private readonly agingMs: number;
  private readonly fifo: boolean;
  /** Every queued key's entry; an entry is here iff queued. */
  private readonly entries = new Map<K, Entry<K>>();
  /** Levels by value; `order` lists the normal ones (not AGED), highest first. */
  private readonly levels = new Map<number, Level<K>>();
  private order: Level<K>[] = [];
  private readonly aged = new Level<K>(AGED);
  /** Entries below the default priority in the order they were queued, for aging (lazily cleaned). */
  private readonly toAge = new Fifo<Entry<K>>();
  /** Whether the last hand-out, made while both had keys, was from the aged class. */
  private agedServedLast = false;

  constructor(options: FairReadySetOptions<K> = {}) {
    this.fifo = options.fifo ?? false;
    this.partition = this.fifo ? () => '' : (options.partition ?? namespaceOf);
    this.agingMs = this.fifo ? Infinity : (options.agingMs ?? DEFAULT_AGING_MS);
    if (!(this.agingMs > 0)) throw new RangeError(`agingMs must be positive, got ${this.agingMs}`);
  }

  get length(): number {
    return this.entries.size;
  }

  has(key: K): boolean {
    return this.entries.has(key);
  }

  /** Queues key, which must not be queued already; `since` is when it became ready (for aging). */
  push(key: K, priority: number, since: number): void {
    if (this.entries.has(key)) throw new Error(`key ${key} is queued already`);
    const entry: Entry<K> = { key, level: this.fifo ? DEFAULT_PRIORITY : priority, priority, since, queued: true };
    this.entries.set(key, entry);
    this.levelOf(entry.level).push(this.partition(key), entry);
    if (entry.level < DEFAULT_PRIORITY && this.agingMs !== Infinity) this.toAge.push(entry);
  }

  /** Raises a queued key to `priority` if that is higher; returns whether it moved. */
  raise(key: K, priority: number): boolean {
    const entry = this.entries.get(key);
    if (!entry || priority <= entry.priority) return false;
    entry.priority = priority;
    if (this.fifo) return true;
    // An aged entry keeps its turn among the aged unless the new priority is the default or above:
    // then it is fresh news, and goes where fresh news goes.
    if (entry.level === AGED && priority < DEFAULT_PRIORITY) return true;
    this.moveTo(entry, priority);
    return true;
  }

  /** The next key and its priority, by the rules in the header; undefined when none is queued. */
  shift(now: number): { key: K; priority: number } | undefined {
    if (this.entries.size === 0) return undefined;
    this.promoteAged(now);
    const top = this.order.find((l) => l.live > 0);
    let entry: Entry<K> | undefined;
    if (this.aged.live > 0 && (!top || !this.agedServedLast)) {
      entry = this.aged.shift();
      this.agedServedLast = top !== undefined;
    } else if (top) {
      entry = top.shift();
      this.agedServedLast = false;
    }
    if (!entry) return undefined;
    entry.queued = false;
    this.entries.delete(entry.key);
    return { key: entry.key, priority: entry.priority };
  }

  /** The priority of a queued key; undefined when it is not queued. */
  priorityOf(key: K): number | undefined {
    return this.entries.get(key)?.priority;
  }

  private promoteAged(now: number): void {
    while (this.toAge.length > 0) {
      const entry = this.toAge.peek();
      if (entry.queued && entry.level < DEFAULT_PRIORITY) {
        if (now - entry.since < this.agingMs) return;
        this.moveTo(entry, AGED);
      }
      this.toAge.shift();
    }
  }

  private moveTo(entry: Entry<K>, level: number): void {
    this.levelOf(entry.level).live--;
    entry.level = level;
    (level === AGED ? this.aged : this.levelOf(level)).push(this.partition(entry.key), entry);
  }

  private levelOf(value: number): Level<K> {
    if (value === AGED) return this.aged;
    let level = this.levels.get(value);
    if (!level) {
      level = new Level<K>(value);
      this.levels.set(value, level);
      this.order = [...this.levels.values()].sort((a, b) => b.value - a.value);
    }
    return level;
  }
}
