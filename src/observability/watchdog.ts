/**
 * Detects a stalled event loop, for the liveness probe.
 *
 * Everything in this process (reconciles, watches, Lease renewals, the probe server itself) runs
 * on one event loop. A loop blocked by a runaway synchronous computation cannot answer a probe at
 * all, and the kubelet sees that as a timeout; but a loop that is blocked again and again answers
 * some probes in between, and looks alive while doing no useful work. This watchdog remembers
 * stalls, so /healthz keeps failing for a while after one.
 *
 * How: a timer ticks every intervalMs; the lateness of a tick is how long the loop could not run
 * timers. A tick later than stallThresholdMs is a stall.
 *
 * Why 5 s: far above anything a healthy process does in one go (GC pauses and a large JSON parse
 * take milliseconds to a few hundred), so a busy but healthy process never trips it; and below
 * leader election's renew deadline (10 s), so a loop too blocked to renew the Lease shows on the
 * probe before it costs leadership.
 * Why a 20 s window: with the kubelet's defaults (probe every 10 s, restart after 3 failures in a
 * row) one isolated stall fails at most 2 probes and does not restart the pod, while stalls that
 * recur at least every 20 s keep /healthz failing until the kubelet restarts it.
 *
 * Guarantees: the timer is unref'd (it never keeps the process alive) and stop() cancels it.
 */
export interface WatchdogOptions {
  /** Default 500 ms. */
  intervalMs?: number;
  /** Default 5000 ms. */
  stallThresholdMs?: number;
  /** How long a stall keeps the check failing; default 20000 ms. */
  windowMs?: number;
  /** Monotonic milliseconds; default performance.now. */
  now?: () => number;
}

export interface Stall {
  /** When the stall ended (the late tick), on the `now` scale. */
  at: number;
  /** How long timers could not run, beyond the interval. */
  durationMs: number;
}

export class EventLoopWatchdog {
  readonly intervalMs: number;
  readonly stallThresholdMs: number;
  readonly windowMs: number;
  private readonly now: () => number;
  private timer: NodeJS.Timeout | undefined;
  private lastTick = 0;
  private last: Stall | undefined;

  constructor(options: WatchdogOptions = {}) {
    this.intervalMs = options.intervalMs ?? 500;
    this.stallThresholdMs = options.stallThresholdMs ?? 5_000;
    this.windowMs = options.windowMs ?? 20_000;
    this.now = options.now ?? (() => performance.now());
  }

  start(): void {
    if (this.timer) return;
    this.lastTick = this.now();
    this.timer = setInterval(() => this.tick(), this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** A health check: true, or why the loop counts as stalled. */
  readonly check = (): true | string => {
    if (!this.timer) return true;
    const now = this.now();
    // Timers overdue right now: the loop runs I/O callbacks (this probe) but not timers.
    const overdue = now - this.lastTick - this.intervalMs;
    if (overdue >= this.stallThresholdMs)
      return `timers have not run for ${seconds(overdue)} (threshold ${seconds(this.stallThresholdMs)})`;
    const stall = this.last;
    if (stall && now - stall.at < this.windowMs) {
      return `event loop stalled for ${seconds(stall.durationMs)}, ${seconds(now - stall.at)} ago (threshold ${seconds(this.stallThresholdMs)}, remembered for ${seconds(this.windowMs)})`;
    }
    return true;
  };

  private tick(): void {
    const now = this.now();
    const late = now - this.lastTick - this.intervalMs;
    if (late >= this.stallThresholdMs) this.last = { at: now, durationMs: late };
    this.lastTick = now;
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
