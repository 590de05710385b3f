/**
 * Node's check of a server's request deadlines (headersTimeout, requestTimeout) runs only while
 * the server holds a connection.
 *
 * Node checks them with an interval timer per server (connectionsCheckingInterval, 1 s here: see
 * connectionlimits.ts), started when the server listens and running until it closes, connections
 * or none: the probe and metrics servers woke an idle operator twice a second for nothing to
 * check. Only a request in progress can pass a deadline, and only an open connection can carry
 * one; so the interval is set to the longest a timer can wait (24.8 days) while no connection is
 * open, and back to intervalMs when one opens: a request's deadline is checked as often as before
 * from its connection's accept on.
 *
 * How: Node (18 to 26) starts its interval in the server's 'listening' listener,
 * setupConnectionsTracking, which restarts it (clearing the running one) with the server's
 * connectionsCheckingInterval at each call. Where no such listener exists (another runtime, a
 * later Node that renamed it) nothing changes: Node's own interval keeps running as configured.
 *
 * Guarantees: while a connection is open the checks run every intervalMs; returns whether the
 * pause is in effect (false: Node's interval runs unchanged).
 */
import type { Server, Socket } from 'node:net';
import { LONGEST_TIMER_MS } from '../runtime/index.js';

/** The name of the 'listening' listener of Node's http.Server that (re)starts the checks. */
export const NODE_CHECKS_LISTENER = 'setupConnectionsTracking';

export function checkDeadlinesOnlyWithConnections(server: Server, intervalMs: number): boolean {
  const restart = server.listeners('listening').find((l) => l.name === NODE_CHECKS_LISTENER) as (() => void) | undefined;
  if (!restart) return false;
  const settable = server as Server & { connectionsCheckingInterval: number };
  const checkEvery = (ms: number): void => {
    if (!server.listening || settable.connectionsCheckingInterval === ms) return;
    settable.connectionsCheckingInterval = ms;
    restart.call(server);
  };
  let open = 0;
  server.on('connection', (socket: Socket) => {
    open++;
    checkEvery(intervalMs);
    socket.once('close', () => {
      if (--open === 0) checkEvery(LONGEST_TIMER_MS);
    });
  });
  // After Node's own listener (registered when the server was made), which started the checks.
  server.on('listening', () => {
    if (open === 0) checkEvery(LONGEST_TIMER_MS);
  });
  return true;
}
