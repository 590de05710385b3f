/**
 * The start-up deadline, controller-runtime's CacheSyncTimeout (default 2 minutes) stretched over
 * the whole start: reaching the API server, finding the CRDs, and the caches' first sync.
 *
 * Why a deadline rather than retrying forever: a process that cannot start for minutes is stuck
 * on something a restart may clear (a proxy connection gone silent, a stale DNS answer), and a
 * pod that keeps running without ever becoming ready hides it; exiting 1 with the last problem
 * puts the reason in the log and the pod in CrashLoopBackOff, which on-call engineers look for.
 *
 * Guarantee: once `timeoutMs` has passed, every signal from bound() is aborted, and explain()
 * turns whatever the start-up was doing into a StartupTimeoutError that names the last problem
 * reported (so a proxy that never answers is named). done() releases the timer.
 */
import type { Clock, Timer } from '../runtime/clock.js';

export class StartupTimeoutError extends Error {
  override readonly name = 'StartupTimeoutError';
}

export class StartupDeadline {
  private readonly expired = new AbortController();
  private readonly timer: Timer;
  private lastProblem = '';

  constructor(
    clock: Clock,
    private readonly timeoutMs: number,
  ) {
    this.timer = clock.setTimer(timeoutMs, () => this.expired.abort(new Error('the start-up deadline passed')));
  }

  /** `signal`, also aborted at the deadline. */
  bound(signal: AbortSignal): AbortSignal {
    return AbortSignal.any([signal, this.expired.signal]);
  }

  /** What stands in the way now (said again each time it changes); the error names the last one. */
  problem(text: string): void {
    this.lastProblem = text;
  }

  get passed(): boolean {
    return this.expired.signal.aborted;
  }

  /** `err` as it is, unless the deadline has passed: then a StartupTimeoutError naming the last problem. */
  explain(err: unknown): unknown {
    if (!this.passed) return err;
    const seconds = Math.round(this.timeoutMs / 100) / 10;
    return new StartupTimeoutError(
      `not started within ${seconds} s (CACHE_SYNC_TIMEOUT_SECONDS): ${this.lastProblem || 'no problem reported, still starting'}`,
      { cause: err },
    );
  }

  done(): void {
    this.timer.cancel();
  }
}
