/**
 * Detects a stalled event loop, for the liveness probe.
 *
 * Everything in this process (reconciles, watches, Lease renewals, the probe server itself) runs
 * on one event loop. A loop blocked by a runaway synchronous computation cannot answer a probe at
 * all, and the kubelet sees that as a timeout; but a loop that is blocked again and again answers
 * some probes in between, and looks alive while doing no useful work. This watchdog remembers
 * stalls, so /healthz keeps failing for a while after one.
 *
 * How: it reads the ticks of the event-loop sampler (loopsampler.ts), which the event-loop delay
 * metrics share, so one timer serves both and an idle process sleeps between ticks up to 1.6 s
 * apart. How long timers could not run before a tick is the larger of how late it ran and how
 * long the loop was busy since the previous tick: a stall that began early in a long period ends
 * the period late by less than its length, but is busy time in full. A stall is such a time of
 * stallThresholdMs or more. A loop that only works hard, one short callback after another, runs
 * the tick on time and is busy for at most the period (1.6 s), well under the threshold.
 *
 * Why 5 s: far above anything a healthy process does in one go (GC pauses and a large JSON parse
 * take milliseconds to a few hundred), so a busy but healthy process never trips it; and below
 * leader election's renew deadline (10 s), so a loop too blocked to renew the Lease shows on the
 * probe before it costs leadership.
 * Why a 20 s window: with the kubelet's defaults (probe every 10 s, restart after 3 failures in a
 * row) one isolated stall fails at most 2 probes and does not restart the pod, while stalls that
 * recur at least every 20 s keep /healthz failing until the kubelet restarts it.
 *
 * Guarantees: start() subscribes to the sampler and stop() unsubscribes (the sampler's timer never
 * keeps the process alive, and stops with its last subscriber).
 */
import { sharedEventLoopSampler, type EventLoopSampler, type LoopSample } from './loopsampler.js';

export interface WatchdogOptions {
  /** Whose ticks to read; default the process's shared sampler (its clock is the watchdog's). */
  sampler?: EventLoopSampler;
  /** Default 5000 ms; above the sampler's longest period, so that steady work never reads as a stall. */
  stallThresholdMs?: number;
  /** How long a stall keeps the check failing; default 20000 ms. */
  windowMs?: number;
}

export interface Stall {
  /** When the stall ended (the late tick), on the sampler's clock. */
  at: number;
  /** How long timers could not run (the larger of the tick's lateness and the loop's busy time before it). */
  durationMs: number;
}

export class EventLoopWatchdog {
  readonly stallThresholdMs: number;
  readonly windowMs: number;
  private readonly sampler: EventLoopSampler;
  private unsubscribe: (() => void) | undefined;
  private last: Stall | undefined;

  constructor(options: WatchdogOptions = {}) {
    this.sampler = options.sampler ?? sharedEventLoopSampler();
    this.stallThresholdMs = options.stallThresholdMs ?? 5_000;
    this.windowMs = options.windowMs ?? 20_000;
    if (!(this.stallThresholdMs > this.sampler.idlePeriodMs))
      throw new RangeError(
        `EventLoopWatchdog: stallThresholdMs (${this.stallThresholdMs}) must exceed the sampler's longest period (${this.sampler.idlePeriodMs} ms)`,
      );
  }

  start(): void {
    this.unsubscribe ??= this.sampler.subscribe((sample) => this.tick(sample));
  }

  stop(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
  }

  /** A health check: true, or why the loop counts as stalled. */
  readonly check = (): true | string => {
    if (!this.unsubscribe) return true;
    const now = this.sampler.clock.now();
    // Timers overdue right now: the loop runs I/O callbacks (this probe) but not timers.
    const overdue = now - this.sampler.nextDueAt;
    if (overdue >= this.stallThresholdMs)
      return `timers have not run for ${seconds(overdue)} (threshold ${seconds(this.stallThresholdMs)})`;
    const stall = this.last;
    if (stall && now - stall.at < this.windowMs) {
      return `event loop stalled for ${seconds(stall.durationMs)}, ${seconds(now - stall.at)} ago (threshold ${seconds(this.stallThresholdMs)}, remembered for ${seconds(this.windowMs)})`;
    }
    return true;
  };

  private tick(sample: LoopSample): void {
    const blocked = Math.max(sample.lateMs, sample.busyMs ?? 0);
    if (blocked >= this.stallThresholdMs) this.last = { at: sample.at, durationMs: blocked };
  }
}

function seconds(ms: number): string {
  return `${(ms / 1000).toFixed(1)} s`;
}
