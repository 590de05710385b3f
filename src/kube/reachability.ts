/**
 * Whether the API server answers at all, as the transport sees it: the evidence for a liveness
 * check that a restart could cure what is wrong (a tunnel or a proxy connection gone silent, a
 * stale DNS answer, a wedged socket pool: state that lives in this process).
 *
 * An answer is any HTTP response, an error status included (a 500 or a 429 is the server
 * talking). A failure is a request that got no response at all: its deadline passed, the
 * connection was refused or reset, the proxy did not answer. A request stopped by its caller is
 * neither.
 *
 * Stream data (a watch's events and bookmarks) counts as an answer too.
 *
 * Guarantee: unreachableMs(bound) is how long requests have been failing with no answer in
 * between, from the first such failure to now, while requests were being made (one is in flight,
 * or one failed within `bound`); 0 as soon as one answer arrives, and 0 when nobody is asking
 * (no evidence either way).
 */
export class Reachability {
  /** The first failure since the last answer; undefined after an answer. */
  private silentSince: number | undefined;
  private lastFailureAt = 0;
  private lastFailure = '';
  private inFlight = 0;

  /** now: a monotonic clock in ms (performance.now by default; injectable for tests). */
  constructor(private readonly now: () => number = () => performance.now()) {}

  /** A request was sent; each is ended() exactly once. */
  started(): void {
    this.inFlight++;
  }

  ended(): void {
    this.inFlight--;
  }

  answered(): void {
    this.silentSince = undefined;
  }

  failed(reason: string): void {
    const at = this.now();
    this.silentSince ??= at;
    this.lastFailureAt = at;
    this.lastFailure = reason;
  }

  /** How long the server has given no answer while requests were made; 0 when it answers. */
  unreachableMs(bound: number): number {
    if (this.silentSince === undefined) return 0;
    const now = this.now();
    if (this.inFlight === 0 && now - this.lastFailureAt >= bound) return 0;
    return now - this.silentSince;
  }

  /** The last failure's message ('' if none since the last answer). */
  get lastError(): string {
    return this.silentSince === undefined ? '' : this.lastFailure;
  }
}
