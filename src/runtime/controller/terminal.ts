/**
 * controller-runtime's reconcile.TerminalError: a failure that retrying the same request cannot
 * cure, only a change of the object (a new generation, which wakes the controller through its
 * watch) or of something it depends on.
 *
 * Guarantees, as the Controller applies them: a reconcile that throws one (anywhere in its
 * `cause` chain, as errors.Is finds it) is not retried with backoff: its key's backoff is
 * forgotten, it counts as a reconcile error (result `error`) and a terminal one
 * (controller_runtime_terminal_reconcile_errors_total), and it is logged once. The one addition
 * to controller-runtime: `recheckAfterMs`, for a refusal whose cause the controller cannot watch
 * (it then looks again after that long, without backoff, instead of never).
 */

export interface TerminalErrorOptions {
  /**
   * Look at the key again after this long (ms) with a fresh pass: for a cause the controller's
   * watches do not see change. Undefined: only a watched change wakes the key again.
   */
  recheckAfterMs?: number;
}

export class TerminalError extends Error {
  override readonly name = 'TerminalError';
  readonly recheckAfterMs: number | undefined;

  constructor(cause: unknown, options: TerminalErrorOptions = {}) {
    super(cause instanceof Error ? cause.message : String(cause), { cause });
    if (options.recheckAfterMs !== undefined && !(options.recheckAfterMs >= 0)) {
      throw new RangeError(`recheckAfterMs must be >= 0, got ${options.recheckAfterMs}`);
    }
    this.recheckAfterMs = options.recheckAfterMs;
  }
}

/** The TerminalError in err's cause chain, if any (errors.Is(err, reconcile.TerminalError(nil))). */
export function terminalErrorIn(err: unknown): TerminalError | undefined {
  const seen = new Set<unknown>();
  for (let e = err; e instanceof Error && !seen.has(e); e = e.cause) {
    if (e instanceof TerminalError) return e;
    seen.add(e);
  }
  return undefined;
}

export function isTerminalError(err: unknown): boolean {
  return terminalErrorIn(err) !== undefined;
}
