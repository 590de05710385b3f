/**
 * One timer that samples the event loop for everything that watches it (the event-loop delay
 * behind nodejs_eventloop_lag_*_seconds, the liveness watchdog), and that lets an idle process
 * sleep.
 *
 * Each tick reports how late it ran and how long the loop was busy since the previous tick
 * (Node's eventLoopUtilization: the time the loop spent outside its wait for I/O). A tick that
 * finds the loop busy less than 1 % of the time since the previous one doubles the period, up to
 * idlePeriodMs; any other tick sets it back to periodMs. A working loop is sampled every periodMs
 * (100 ms), an idle one every idlePeriodMs (1.6 s, reached in 3 s).
 *
 * Why: a timer wakes the process whether or not there is anything to measure. prom-client's
 * monitor (perf_hooks.monitorEventLoopDelay at 100 ms) and the watchdog's own 500 ms tick woke an
 * idle operator 12 times a second, ~1 ms of CPU a second on Node 24: more than a
 * controller-runtime manager spends idle in all. Sampling adaptively, the two share ~0.6 wake-ups a
 * second while nothing happens.
 * Why nothing is lost: a timer due while the loop waited for I/O runs on time, so the samples an
 * idle period skipped are known without waking for them (LoopSample.idle says the period was
 * idle; a delay histogram counts them as on time); and a stall that begins in a long period shows
 * in full in busyMs at the next tick, however late the period made it.
 * Where the runtime does not measure the loop's busy time (Deno's eventLoopUtilization reads 0),
 * no tick counts as idle: the period stays periodMs and busyMs is undefined.
 *
 * Guarantees: the timer runs only while someone subscribes; it never keeps the process alive
 * (unref'd); the last unsubscribe cancels it. Subscribers are called in order, each with every
 * sample.
 */
import { performance } from 'node:perf_hooks';
import type { Clock, Timer } from '../runtime/index.js';

/** The period while the loop works: prom-client's monitor sampled at 100 ms here before. */
export const EVENT_LOOP_SAMPLE_MS = 100;

/** The longest period, while the loop idles: 100 ms doubled four times. */
export const EVENT_LOOP_IDLE_SAMPLE_MS = 1_600;

/** Busy below this share of a period counts as idle: the ticks themselves take ~0.1 % of it. */
const IDLE_BUSY_SHARE = 0.01;

export interface LoopSample {
  /** The clock's now() at the tick. */
  at: number;
  /** The period this tick was set for (a multiple of the sampler's periodMs). */
  periodMs: number;
  /** How long after it was due the tick ran (>= 0). */
  lateMs: number;
  /** How long the loop was busy since the previous tick; undefined where the runtime does not measure it. */
  busyMs: number | undefined;
  /** The loop was busy less than 1 % of the time since the previous tick: this tick's own work, nothing else. */
  idle: boolean;
}

/** Cumulative milliseconds the event loop was busy (`active`) and waiting for I/O (`idle`). */
export type LoopTimes = () => { active: number; idle: number };

export interface EventLoopSamplerOptions {
  /** Default EVENT_LOOP_SAMPLE_MS. */
  periodMs?: number;
  /** Default EVENT_LOOP_IDLE_SAMPLE_MS; at least periodMs. */
  idlePeriodMs?: number;
  /** Default: performance.now and unref'd timers. */
  clock?: Pick<Clock, 'now' | 'setTimer'>;
  /** Default: performance.eventLoopUtilization. */
  loopTimes?: LoopTimes;
}

export class EventLoopSampler {
  readonly periodMs: number;
  readonly idlePeriodMs: number;
  readonly clock: Pick<Clock, 'now' | 'setTimer'>;
  private readonly loopTimes: LoopTimes;
  private readonly subscribers = new Set<(sample: LoopSample) => void>();
  private timer: Timer | undefined;
  private currentPeriod: number;
  private lastTick = 0;
  private lastTimes = { active: 0, idle: 0 };

  constructor(options: EventLoopSamplerOptions = {}) {
    this.periodMs = options.periodMs ?? EVENT_LOOP_SAMPLE_MS;
    this.idlePeriodMs = options.idlePeriodMs ?? EVENT_LOOP_IDLE_SAMPLE_MS;
    if (!(this.periodMs > 0) || !(this.idlePeriodMs >= this.periodMs))
      throw new RangeError(`EventLoopSampler: need 0 < periodMs <= idlePeriodMs, got ${this.periodMs} and ${this.idlePeriodMs}`);
    this.clock = options.clock ?? unrefClock;
    this.loopTimes = options.loopTimes ?? (() => performance.eventLoopUtilization());
    this.currentPeriod = this.periodMs;
  }

  /** When the next tick is due on the clock's scale (meaningful while subscribed). */
  get nextDueAt(): number {
    return this.lastTick + this.currentPeriod;
  }

  /** Calls fn with every sample from now on; returns its unsubscribe. */
  subscribe(fn: (sample: LoopSample) => void): () => void {
    const own = (sample: LoopSample): void => fn(sample);
    this.subscribers.add(own);
    if (!this.timer) this.start();
    return () => {
      this.subscribers.delete(own);
      if (this.subscribers.size === 0) this.stop();
    };
  }

  private start(): void {
    this.lastTick = this.clock.now();
    this.lastTimes = this.loopTimes();
    this.currentPeriod = this.periodMs;
    this.arm();
  }

  private stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private arm(): void {
    this.timer = this.clock.setTimer(this.currentPeriod, () => this.tick());
  }

  private tick(): void {
    const at = this.clock.now();
    const times = this.loopTimes();
    const busy = times.active - this.lastTimes.active;
    // No time at all accounted for: the runtime does not measure the loop.
    const measured = busy + (times.idle - this.lastTimes.idle) > 0;
    const elapsed = at - this.lastTick;
    const sample: LoopSample = {
      at,
      periodMs: this.currentPeriod,
      lateMs: Math.max(0, elapsed - this.currentPeriod),
      busyMs: measured ? busy : undefined,
      idle: measured && busy < elapsed * IDLE_BUSY_SHARE,
    };
    this.lastTick = at;
    this.lastTimes = times;
    this.currentPeriod = sample.idle ? Math.min(this.currentPeriod * 2, this.idlePeriodMs) : this.periodMs;
    // Armed before the subscribers run, so one that throws cannot stop the sampling.
    this.arm();
    for (const fn of this.subscribers) fn(sample);
  }
}

/** The process's monotonic clock with timers that never keep it alive. */
const unrefClock: Pick<Clock, 'now' | 'setTimer'> = {
  now: () => performance.now(),
  setTimer(ms, fn) {
    const handle = setTimeout(fn, ms);
    handle.unref();
    return { cancel: () => clearTimeout(handle) };
  },
};

let shared: EventLoopSampler | undefined;

/** The process's one sampler (the event loop is one per process): what the metrics and the watchdog use by default. */
export function sharedEventLoopSampler(): EventLoopSampler {
  shared ??= new EventLoopSampler();
  return shared;
}
