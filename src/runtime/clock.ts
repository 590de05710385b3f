/**
 * Time, injectable. Every timing rule in the runtime (backoff, delays, lease expiry, watchdogs)
 * reads time and sets timers through a Clock, so tests drive a FakeClock instead of sleeping.
 */
export interface Timer {
  /** Cancels the timer; harmless when it already fired. */
  cancel(): void;
}

export interface Clock {
  /** Milliseconds on a monotonic scale (never goes back); only differences mean anything. */
  now(): number;
  /** Runs fn once after ms milliseconds. */
  setTimer(ms: number, fn: () => void): Timer;
  /** Resolves after ms milliseconds, or at once (rejecting) when signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new Error('aborted');
}

/** Sleeps on any Clock: resolves after ms, rejects with the signal's reason when it aborts first. */
export function sleepWith(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = (): void => {
      timer.cancel();
      reject(abortError(signal!));
    };
    const timer = clock.setTimer(ms, () => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    });
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Timers longer than this fire at once under Node's setTimeout (it treats them as 1 ms, with a
 * TimeoutOverflowWarning), so no timer is ever set longer; a deadline further away is reached by
 * re-arming.
 */
export const LONGEST_TIMER_MS = 2 ** 31 - 1;

/** setTimeout for any delay: beyond LONGEST_TIMER_MS it re-arms until the deadline is reached. */
export function longTimeout(ms: number, fn: () => void): Timer {
  let handle: ReturnType<typeof setTimeout>;
  const arm = (left: number): void => {
    const step = Math.min(Math.max(0, left), LONGEST_TIMER_MS);
    handle = setTimeout(() => (left > step ? arm(left - step) : fn()), step);
  };
  arm(Number.isNaN(ms) ? 0 : ms);
  return { cancel: () => clearTimeout(handle) };
}

/** The process's monotonic clock and its real timers (never overflowing: see longTimeout). */
export const realClock: Clock = {
  now: () => performance.now(),
  setTimer: longTimeout,
  sleep(ms, signal) {
    return sleepWith(realClock, ms, signal);
  },
};
