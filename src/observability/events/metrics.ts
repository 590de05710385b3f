/**
 * What the event recorder reports about the Events it was asked to record: how many reached the
 * API server, and how many were dropped and why (echoperator_events_written_total{type},
 * echoperator_events_dropped_total{reason}).
 *
 * Guarantees: both count occurrences (recordEvent() calls), not API writes: identical events
 * merged into one write count once each, so every occurrence that is no longer waiting is counted
 * exactly once, written or dropped (with one reason), and the two rates compare.
 */
import type { EventType } from '../../runtime/index.js';

/**
 * Why an Event was dropped. Only `spam_filter` is by design (a hot loop on one object would flood
 * the API server); every other reason loses something a user would have read in
 * `kubectl describe`.
 */
export const EVENT_DROP_REASONS = [
  /** The object's token bucket was empty: client-go's spam filter (25 at once, then 1 per 5 minutes). */
  'spam_filter',
  /** queueSize distinct events were already waiting: the writer is far behind (API server slow or unreachable). */
  'queue_full',
  /** The API server refused it for good (403: RBAC; 422: invalid; any other non-transient answer). */
  'rejected',
  /** No answer, 429 or 5xx on every one of maxAttempts tries (about 2 minutes by default). */
  'retries_exhausted',
  /** Still waiting, or recorded, when the recorder closed and its shutdown budget ran out. */
  'shutdown',
  /** The object had no kind or name: a caller's bug. */
  'invalid_object',
  /** Recording or writing threw unexpectedly (logged): a bug in the recorder. */
  'internal_error',
] as const;

export type EventDropReason = (typeof EVENT_DROP_REASONS)[number];

export interface EventRecorderMetrics {
  /** `count` occurrences of an Event of `type` reached the API server (created or patched). */
  written(type: EventType, count: number): void;
  /** `count` occurrences were dropped for `reason`. */
  dropped(reason: EventDropReason, count: number): void;
}

export const nopEventRecorderMetrics: EventRecorderMetrics = { written() {}, dropped() {} };
