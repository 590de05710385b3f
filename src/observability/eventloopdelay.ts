/**
 * The event-loop delay histogram behind nodejs_eventloop_lag_{min,max,mean,stddev,p50,p90,p99}_seconds,
 * fed by the EventLoopSampler (loopsampler.ts) in place of prom-client's
 * perf_hooks.monitorEventLoopDelay, whose timer wakes the process at its resolution also while it
 * idles.
 *
 * A sample means what it meant with Node's monitor at 100 ms: the time between two runs of a
 * timer set for the sampler's period, so a loop that keeps nothing waiting reads 0.1 s and a late
 * run adds its lateness. A tick after an idle period of k periods stands for the k samples the
 * monitor would have taken: k - 1 on time and its own. After a busy long period (the loop started
 * working while the sampler waited) only the tick's own sample is known, and recorded.
 *
 * Guarantees: read() returns what was recorded since the previous read() (prom-client reset its
 * histogram at each scrape too) and starts anew.
 */
import { createHistogram, type RecordableHistogram } from 'node:perf_hooks';
import type { LoopSample } from './loopsampler.js';

export interface EventLoopDelayStats {
  /** Seconds; what Node's histogram reports with no sample: min 9.2e9, max 0, mean and stddev NaN, percentiles 0. */
  min: number;
  max: number;
  mean: number;
  stddev: number;
  p50: number;
  p90: number;
  p99: number;
}

export class EventLoopDelayRecorder {
  private histogram: RecordableHistogram = createHistogram();

  constructor(
    /** The sampler's working period (LoopSample.periodMs is a multiple of it). */
    private readonly periodMs: number,
  ) {}

  readonly record = (sample: LoopSample): void => {
    const skipped = sample.idle ? Math.round(sample.periodMs / this.periodMs) - 1 : 0;
    for (let i = 0; i < skipped; i++) this.histogram.record(nanoseconds(this.periodMs));
    this.histogram.record(nanoseconds(this.periodMs + sample.lateMs));
  };

  read(): EventLoopDelayStats {
    const h = this.histogram;
    this.histogram = createHistogram();
    return {
      min: h.min / 1e9,
      max: h.max / 1e9,
      mean: h.mean / 1e9,
      stddev: h.stddev / 1e9,
      p50: h.percentile(50) / 1e9,
      p90: h.percentile(90) / 1e9,
      p99: h.percentile(99) / 1e9,
    };
  }
}

function nanoseconds(ms: number): number {
  return Math.max(1, Math.round(ms * 1e6));
}
