/**
 * What stops one request: its deadline or its caller's signal, whichever comes first, without an
 * AbortController per request. Making an AbortSignal and adding and removing a listener on it cost
 * 20-35 us of the ~100 us RestClient adds to a request over a bare `https.request`
 * (docs/benchmarks.md, "What would close the rest"), and most requests never need one: only a
 * proxy tunnel's dial, a retry's sleep and the wait for a shared authentication take a signal,
 * and they get one made on demand (`signal`), already aborted when the request was.
 *
 * Guarantees: the first abort wins (its reason stays); on abort the request's own hook (onAbort)
 * runs first, synchronously and at most once, then the listeners of `signal`, if one was made, as
 * they would on a signal the request had registered on first; after dispose() no timer or listener
 * is left, and a deadline still pending never fires.
 */
import { DeadlineExceeded } from './dial.js';

/** Node's longest timer (2^31-1 ms); see runtime/clock.ts, which this lower layer cannot import. */
const MAX_TIMER_MS = 2 ** 31 - 1;

export class RequestAbort {
  /** Invariant: once true, stays true, and `abortReason` is the first abort's. */
  private isAborted = false;
  private abortReason: unknown = undefined;
  /** Made by the first read of `signal`; aborted with `reason` whenever this is. */
  private controller: AbortController | undefined;
  private hook: (() => void) | undefined;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private readonly caller: AbortSignal | undefined;
  private readonly onCallerAbort = (): void => this.abort(this.caller?.reason);

  /** Aborts with DeadlineExceeded after timeoutMs, or with the caller's reason when `caller` aborts. */
  constructor(timeoutMs: number, caller?: AbortSignal) {
    // Capped as every timer is (see runtime/clock.ts): a longer one would fire after 1 ms.
    this.timer = setTimeout(() => this.abort(new DeadlineExceeded(timeoutMs)), Math.min(timeoutMs, MAX_TIMER_MS));
    this.caller = caller;
    if (caller?.aborted) this.abort(caller.reason);
    else caller?.addEventListener('abort', this.onCallerAbort, { once: true });
  }

  get aborted(): boolean {
    return this.isAborted;
  }

  get reason(): unknown {
    return this.abortReason;
  }

  /** An AbortSignal that follows this one, for the callees that need one (made on first use). */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.isAborted) this.controller.abort(this.abortReason);
    }
    return this.controller.signal;
  }

  /** The request's own reaction to an abort (one at a time; undefined clears it). */
  onAbort(hook: (() => void) | undefined): void {
    this.hook = hook;
  }

  /** The headers came: the deadline no longer applies (a watch then runs until its caller stops it). */
  stopDeadline(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  abort(reason: unknown): void {
    if (this.isAborted) return;
    this.isAborted = true;
    this.abortReason = reason;
    this.stopDeadline();
    const hook = this.hook;
    this.hook = undefined;
    hook?.();
    this.controller?.abort(reason);
  }

  dispose(): void {
    this.stopDeadline();
    this.hook = undefined;
    this.caller?.removeEventListener('abort', this.onCallerAbort);
  }
}
