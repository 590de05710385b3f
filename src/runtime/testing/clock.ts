/**
 * A clock that moves only when told to, for tests (k8s.io/utils/clock/testing): it drives every
 * part that takes a Clock without real waiting.
 */
import { sleepWith, type Clock, type Timer } from '../clock.js';

interface PendingTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/**
 * A clock that moves only when told to. Timers fire in deadline order (ties in creation order)
 * during step(), each after its deadline has been reached.
 */
export class FakeClock implements Clock {
  private current: number;
  private seq = 0;
  /** Timers not yet fired nor cancelled. */
  private pending: PendingTimer[] = [];

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(ms: number, fn: () => void): Timer {
    const timer: PendingTimer = { at: this.current + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.pending.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  /** Number of live timers: lets a test check that a part cleaned up after itself. */
  get timerCount(): number {
    return this.pending.filter((t) => !t.cancelled).length;
  }

  /**
   * Advances time by ms, firing every timer that comes due on the way, in order. Yields to the
   * microtask queue after each timer so promise chains woken by it run before the next fires.
   */
  async step(ms: number): Promise<void> {
    const target = this.current + ms;
    for (;;) {
      this.pending = this.pending.filter((t) => !t.cancelled);
      this.pending.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.pending[0];
      if (!next || next.at > target) break;
      this.pending.shift();
      this.current = Math.max(this.current, next.at);
      next.fn();
      await flushMicrotasks();
    }
    this.current = target;
    await flushMicrotasks();
  }

  /**
   * Moves time on by ms without firing any timer, as a blocked event loop lets time pass: the
   * timers that came due meanwhile fire late, at the time of the next step().
   */
  jump(ms: number): void {
    this.current += Math.max(0, ms);
  }

  /** The deadline of the earliest live timer, or undefined when none is set. */
  nextTimerAt(): number | undefined {
    let next: number | undefined;
    for (const t of this.pending) if (!t.cancelled && (next === undefined || t.at < next)) next = t.at;
    return next;
  }

  /**
   * Moves time to the earliest live timer's deadline and fires that one timer, if it is due by
   * `limit` (default: whenever it is); then yields to the microtask queue as step() does. Time
   * never goes back: a timer already overdue fires at the current time. Returns whether a timer
   * fired.
   */
  async advanceToNextTimer(limit = Number.POSITIVE_INFINITY): Promise<boolean> {
    this.pending = this.pending.filter((t) => !t.cancelled);
    this.pending.sort((a, b) => a.at - b.at || a.seq - b.seq);
    const next = this.pending[0];
    if (!next || next.at > limit) return false;
    this.pending.shift();
    this.current = Math.max(this.current, next.at);
    next.fn();
    await flushMicrotasks();
    return true;
  }

  /**
   * Moves time to `target`, from one timer's deadline to the next rather than by fixed steps: each
   * timer fires exactly at its deadline, and `settle` runs before the first and after each one, so
   * the work a timer wakes (promise chains, setImmediate hops) finishes, and sets its own timers
   * from that instant, before the next deadline is looked up. Ends at `target` after a last settle.
   * A timer that keeps re-arming itself with 0 ms would never let time pass: it is the caller's bug.
   */
  async runUntil(target: number, settle: () => Promise<void> = () => flushMicrotasks()): Promise<void> {
    await settle();
    while (await this.advanceToNextTimer(target)) await settle();
    this.current = Math.max(this.current, target);
    await settle();
  }
}

/** Lets pending promise callbacks run; a few rounds cover chains of awaits. */
export async function flushMicrotasks(rounds = 20): Promise<void> {
  for (let i = 0; i < rounds; i++) await Promise.resolve();
}
