/**
 * A bounded concurrency pool for the bench's own creates.
 */
import { isInterrupted } from './cleanup.js';

/** Runs fn over items with at most `concurrency` in flight; items may be an async iterable. */
export async function pool<T>(items: Iterable<T> | AsyncIterable<T>, concurrency: number, fn: (item: T) => Promise<void>): Promise<void> {
  const it = Symbol.asyncIterator in items ? items[Symbol.asyncIterator]() : items[Symbol.iterator]();
  let failed: { error: unknown } | undefined;
  const worker = async (): Promise<void> => {
    while (!failed && !isInterrupted()) {
      const next = await it.next();
      if (next.done) return;
      try {
        await fn(next.value);
      } catch (error) {
        failed ??= { error };
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, concurrency) }, worker));
  if (failed) throw failed.error;
  if (isInterrupted()) throw new Error('interrupted');
}

/** An unbounded async queue: a producer pushes, pool() consumers iterate until close(). */
export class AsyncQueue<T> implements AsyncIterable<T> {
  private readonly items: T[] = [];
  private head = 0;
  private readonly waiters: ((r: IteratorResult<T>) => void)[] = [];
  private closed = false;

  push(item: T): void {
    const w = this.waiters.shift();
    if (w) w({ value: item, done: false });
    else this.items.push(item);
  }

  close(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w({ value: undefined as never, done: true });
  }

  [Symbol.asyncIterator](): AsyncIterator<T> {
    return {
      next: () => {
        if (this.head < this.items.length) {
          const value = this.items[this.head]!;
          this.items[this.head++] = undefined as never;
          return Promise.resolve({ value, done: false });
        }
        if (this.closed) return Promise.resolve({ value: undefined as never, done: true });
        return new Promise((resolve) => this.waiters.push(resolve));
      },
    };
  }
}
