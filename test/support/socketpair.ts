/**
 * The bookkeeping of a relayed connection, shared by the test proxies: both of its sockets are
 * tracked in `open` while they live (so the test can cut or destroy them all), and either side
 * ending ends both.
 */
import type { Socket } from 'node:net';

/** Adds `a` and `b` to `open`; the function returned destroys both and removes them from it. */
export function trackPair(a: Socket, b: Socket, open: Set<Socket>): () => void {
  open.add(a).add(b);
  return () => {
    a.destroy();
    b.destroy();
    open.delete(a);
    open.delete(b);
  };
}
