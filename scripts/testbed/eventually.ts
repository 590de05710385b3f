/**
 * Waiting on a condition with a deadline, for every tier: a test waits for what it needs to see,
 * never for a fixed time, and a condition that never holds fails the test with the last reason
 * instead of hanging the run. Pure (no cluster): unit tests use it as well, and so do the scripts
 * that drive a cluster (scripts/lab/pictures), which never import from test/.
 */

/** An attempt still pending at its deadline. */
class LateError extends Error {}

/**
 * Polls fn until it returns a value other than undefined/false, or fails with the last error once
 * timeoutMs has passed. An attempt that has not settled by the deadline fails it too (the attempt
 * is left to finish on its own), so a hung call cannot hold the run.
 */
export async function eventually<T>(
  what: string,
  fn: () => T | undefined | false | Promise<T | undefined | false>,
  timeoutMs = 30_000,
  intervalMs = 200,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError = '';
  for (;;) {
    try {
      const v = await beforeDeadline(fn, deadline);
      if (v !== undefined && v !== false) return v;
      lastError = '';
    } catch (err) {
      lastError = String(err);
    }
    if (Date.now() > deadline) {
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${lastError ? `: ${lastError}` : ''}`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/** Awaits promise, or fails once timeoutMs has passed with it still pending (naming `what`). */
export async function within<T>(what: string, promise: Promise<T>, timeoutMs = 30_000): Promise<T> {
  try {
    return await beforeDeadline(() => promise, Date.now() + timeoutMs);
  } catch (err) {
    if (err instanceof LateError) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    throw err;
  }
}

/** A promise with its resolve function, for a test to learn that something happened. */
export function signal<T = void>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

/** fn's result, or a rejection once the deadline passes with it still pending. */
async function beforeDeadline<T>(fn: () => T | Promise<T>, deadline: number): Promise<T> {
  const result = fn();
  if (!(result instanceof Promise)) return result;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new LateError('the last attempt did not settle by the deadline')), Math.max(0, deadline - Date.now()));
  });
  try {
    return await Promise.race([result, late]);
  } finally {
    clearTimeout(timer);
  }
}
