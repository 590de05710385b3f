/**
 * When the API server says "not now, try again in N seconds", as client-go's checkWait reads it:
 * a 429 (API Priority and Fairness, max-in-flight), or any 5xx, that carries Retry-After. Such a
 * request was not served, so repeating it is safe for every verb, writes included.
 *
 * Guarantees: at most MAX_RETRIES retries per call (client-go's default maxRetries, 10); each
 * wait is what the server asked for, in whole seconds (Retry-After as seconds, or the Status
 * body's details.retryAfterSeconds when the header is absent), never more than MAX_WAIT_MS; an
 * answer without a usable Retry-After is not retried here (the caller's backoff handles it).
 */

/** client-go's default: `rest.Request.maxRetries`. */
export const MAX_RETRIES = 10;

/** A server asking for longer than this is waited on for this long (a bound on a bad header). */
export const MAX_WAIT_MS = 60_000;

/** How long to wait before retrying, or undefined when this answer is not to be retried. */
export function retryAfterMs(
  status: number,
  retryAfterHeader: string | string[] | undefined,
  bodyRetryAfterSeconds?: number,
): number | undefined {
  if (status !== 429 && status < 500) return undefined;
  const header = Array.isArray(retryAfterHeader) ? retryAfterHeader[0] : retryAfterHeader;
  // client-go reads Retry-After as an integer number of seconds (no HTTP dates).
  const seconds = header !== undefined && /^\s*\d+\s*$/.test(header) ? Number(header) : bodyRetryAfterSeconds;
  if (seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return undefined;
  return Math.min(seconds * 1000, MAX_WAIT_MS);
}

/**
 * client-go's rest_client_requests_total and rest_client_request_retries_total, by code and
 * method, and rest_client_request_duration_seconds, by verb.
 */
export interface RestClientMetrics {
  /** Every answer (or '<error>' when none came), retried ones included. */
  requestDone(code: string, method: string): void;
  /** Every retry made because of Retry-After. */
  retried(code: string, method: string): void;
  /**
   * Once per call that is not a watch, when it settles (answered, failed or given up), with its
   * whole time, retries and their waits included: client-go's request latency, observed around
   * its retry loop. A client without this hook records no latency.
   */
  requestLatency?(verb: string, seconds: number): void;
}

export const nopRestClientMetrics: RestClientMetrics = { requestDone() {}, retried() {} };
