/**
 * The answers the fault proxy gives in the API server's stead, shaped as the API server shapes
 * them, so a client takes them exactly as it would take the server's own:
 * - a storm's refusal: a Status of kind Status with the code, the reason the server gives for it
 *   (TooManyRequests for 429 as priority and fairness sends it, InternalError, ServiceUnavailable),
 *   details.retryAfterSeconds and a Retry-After header (client-go and ours retry on those);
 * - an expired watch: a 200 stream whose one event is an ERROR carrying the 410 Status (reason
 *   Expired), which is what the server sends to a watch from a resourceVersion it no longer has.
 */
import type { ServerResponse } from 'node:http';

export type StormStatus = 429 | 500 | 503;

const STORM_REASONS: Record<StormStatus, { reason: string; message: string }> = {
  429: { reason: 'TooManyRequests', message: 'Too many requests, please try again later.' },
  500: { reason: 'InternalError', message: 'Internal error occurred: the server failed to handle the request' },
  503: { reason: 'ServiceUnavailable', message: 'The server is currently unable to handle the request' },
};

/** The Status body of a storm's refusal. */
export function stormStatus(code: StormStatus, retryAfterS: number): object {
  const { reason, message } = STORM_REASONS[code];
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message,
    reason,
    details: { retryAfterSeconds: retryAfterS },
    code,
  };
}

/** Answers with a storm's refusal; the request (and its body) is read and dropped, never forwarded. */
export function answerStorm(res: ServerResponse, code: StormStatus, retryAfterS: number): void {
  const body = JSON.stringify(stormStatus(code, retryAfterS));
  res.req.resume();
  res.writeHead(code, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(body),
    'retry-after': String(retryAfterS),
    'cache-control': 'no-cache, private',
  });
  res.end(body);
}

/** The watch event that ends a watch whose resourceVersion is too old (one line, no newline). */
export const EXPIRED_EVENT_LINE = JSON.stringify({
  type: 'ERROR',
  object: { kind: 'Status', apiVersion: 'v1', status: 'Failure', message: 'too old resource version', reason: 'Expired', code: 410 },
});

/** Answers a watch request as the server answers one from a too-old resourceVersion: 200, the 410 ERROR event, the end. */
export function answerExpiredWatch(res: ServerResponse): void {
  res.req.resume();
  res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-cache, private' });
  res.end(`${EXPIRED_EVENT_LINE}\n`);
}
