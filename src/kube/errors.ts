/**
 * API errors, classified the way a controller must act on them: retry (with backoff), conflict
 * (re-read and retry at once), gone (re-list), not found / already exists (a state, not a failure).
 */
export interface StatusBody {
  kind?: string;
  status?: string;
  message?: string;
  reason?: string;
  code?: number;
  details?: { retryAfterSeconds?: number; causes?: { field?: string; message?: string }[] };
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    /** HTTP status; 0 when the request never got an answer (connection refused, reset, timeout). */
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly status?: StatusBody,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }

  /** Seconds the server asked us to wait (429 / 503 with Retry-After), if any. */
  get retryAfterSeconds(): number | undefined {
    return this.status?.details?.retryAfterSeconds;
  }
}

export function errorCode(err: unknown): number | undefined {
  if (err instanceof ApiError) return err.code;
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

export const isNotFound = (err: unknown): boolean => errorCode(err) === 404;
export const isConflict = (err: unknown): boolean => errorCode(err) === 409 && !isAlreadyExists(err);
export const isAlreadyExists = (err: unknown): boolean => err instanceof ApiError && err.code === 409 && err.reason === 'AlreadyExists';
export const isGone = (err: unknown): boolean => errorCode(err) === 410 || (err instanceof ApiError && err.reason === 'Expired');
export const isTooManyRequests = (err: unknown): boolean => errorCode(err) === 429;
export const isForbidden = (err: unknown): boolean => errorCode(err) === 403;
export const isUnauthorized = (err: unknown): boolean => errorCode(err) === 401;

/** Errors that are worth retrying as they are: transport failures, throttling and server trouble. */
export function isTransient(err: unknown): boolean {
  const code = errorCode(err);
  return code === 0 || code === 429 || (code !== undefined && code >= 500);
}

/** A one-line description for logs and status conditions. */
export function describeError(err: unknown): string {
  if (err instanceof ApiError) return err.code ? `${err.code} ${err.reason}: ${err.message}` : err.message;
  if (err instanceof Error) return err.message;
  return String(err);
}
