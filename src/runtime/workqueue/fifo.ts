/**
 * A FIFO with O(1) push and amortised O(1) shift: Array.shift is O(n), which a queue of 10,000+
 * keys cannot afford on every get().
 */
export class Fifo<T> {
  /** Slots before `head` are consumed and cleared, so the values they held can be collected. */
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  /** The oldest item, left in place; call only when length > 0. */
  peek(): T {
    return this.items[this.head] as T;
  }

  /** The oldest item; call only when length > 0. */
  shift(): T {
    const item = this.items[this.head] as T;
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items.length = 0;
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      // Compact once the consumed prefix is at least half the array: each consumed slot pays
      // for at most one move, and memory stays within twice the live items.
      this.items.copyWithin(0, this.head);
      this.items.length -= this.head;
      this.head = 0;
    }
    return item;
  }
}
