/**
 * A failure the user can act on: printed as its message and hint, without a stack trace.
 */
export class ControlPlaneError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
    this.name = 'ControlPlaneError';
  }
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 60) return `${s}s`;
  return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
}

/** Prints a ControlPlaneError plainly (anything else with its stack) and exits non-zero. */
export function exitWithError(err: unknown): never {
  if (err instanceof ControlPlaneError) {
    console.error(`error: ${err.message}`);
    if (err.hint) console.error(err.hint);
  } else {
    console.error(err);
  }
  process.exit(1);
}
