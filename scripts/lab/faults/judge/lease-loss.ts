/**
 * Whether a replica's exit was its elector's designed stop on a lost lease, judged from what
 * reached the replica through its proxy (the server's log cannot tell: a renewal the server
 * applied may never have been answered to the replica, its answer held back by a partition).
 *
 * The model, which client-go's elector and ours both satisfy: a hold dates from the sending of the
 * write that took or renewed it, and a renewal counts only if its answer arrives before the hold's
 * renew deadline. Following the replica's renewals in order, the hold lapses at the first renew
 * deadline that no timely answer met, or renewDeadline after the last renewal. An exit at or after
 * that instant is a lease loss; `slack` (a fraction of the deadline) allows for the replica sending
 * a little before the proxy received, and for its timers.
 */
import type { LeaseRenewal } from '../proxy/types.js';

export function exitAfterLeaseLoss(renewals: LeaseRenewal[], renewDeadlineMs: number, exitAt: number, slack = 0.9): boolean {
  const seen = renewals.filter((r) => r.answeredAt <= exitAt).sort((a, b) => a.receivedAt - b.receivedAt);
  const first = seen[0];
  if (!first) return false; // it never held the lease
  let heldSince = first.receivedAt;
  for (const r of seen.slice(1)) {
    if (r.answeredAt > heldSince + renewDeadlineMs) break; // answered after the hold had lapsed
    heldSince = r.receivedAt;
  }
  return exitAt - heldSince >= renewDeadlineMs * slack;
}
