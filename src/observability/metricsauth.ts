/**
 * Who may read the metrics: controller-runtime's `filters.WithAuthenticationAndAuthorization`, as
 * kubebuilder scaffolds it. The caller's bearer token is checked with a TokenReview
 * (authentication.k8s.io/v1), then the user it names with a SubjectAccessReview
 * (authorization.k8s.io/v1) for verb `get` on the non-resource URL of the metrics path, the right
 * that a `metrics-reader` ClusterRole (`nonResourceURLs: [/metrics]`, `verbs: [get]`) grants.
 *
 * Guarantees:
 * - no bearer token, or one the API server does not accept: 401; a user without the right: 403;
 *   only a review that said yes gives 200. A review that could not be made (API server down,
 *   throttled, the operator lacking RBAC for reviews) answers 503 or 500, never 200, and is not
 *   cached, so the next scrape asks again.
 * - decisions are cached by a SHA-256 of the token (the token itself is never stored or logged):
 *   allowed for 2 min, denied for 30 s, at most 1,000 allowed and 1,000 denied, each set apart
 *   (decisioncache.ts), so refused tokens, however many, never push out an approval; concurrent
 *   scrapes with one token share one pair of reviews. A revoked right is thus honoured within
 *   2 min, as with controller-runtime's filter.
 * - scrapes cannot starve the operator's own work: at most MAX_REVIEWS_IN_FLIGHT (4) tokens are
 *   under review at once; a scrape that would need one more is answered 503 at once, with
 *   Retry-After, never queued. The reviews go over connections of their own (main.ts gives a
 *   RestClient.withOwnConnections of that size), so they never wait behind reconciles or the
 *   Lease, nor hold their sockets.
 * - a flood of new tokens cannot make reviews in the operator's name at the API server's pace:
 *   reviews of tokens never approved are limited per second, overall and per client address
 *   (reviewrate.ts: 5/s with a burst of 10, and 1/s with a burst of 5); a scrape past the limit is
 *   answered 429 at once, with Retry-After. The renewal of an approval whose TTL ran out is not
 *   limited (at most one per approved token per TTL, and only the API server makes approvals), so
 *   a known scraper is served through a flood of unknown tokens: its approval is cached, its
 *   renewal needs no budget, and a review already running for its token needs no slot.
 * - the TokenReview and SubjectAccessReview of a token share one deadline (5 s), below
 *   Prometheus' default scrape timeout (10 s): an API server that never answers frees the slot then.
 */
import { createHash } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { describeError, isTransient, type Logger, nopLogger, type RequestOpts } from '../runtime/index.js';
import { DecisionCache } from './decisioncache.js';
import { REVIEW_RATE, ReviewRateLimiter, type ReviewRate } from './reviewrate.js';

/**
 * Tokens under review at once, at most. A scraper presents one token and its decision is then
 * cached for minutes, so real scrapers (a Prometheus pair, someone's curl) seldom need more than
 * one or two at a time; reviews answer in milliseconds from a healthy API server, so 4 slots
 * still review hundreds of new tokens a second. Anything beyond is a flood: refused at once,
 * rather than queued into sockets, memory and the API server's priority-and-fairness seats.
 */
export const MAX_REVIEWS_IN_FLIGHT = 4;

/** Retry-After of a scrape refused because every review slot was taken: kube-apiserver's own for max-in-flight. */
export const BUSY_RETRY_AFTER_SECONDS = 1;

/** What the filter needs of RestClient (an interface, so tests can stand in for the API server). */
export interface ReviewApi {
  request<T = unknown>(method: string, path: string, opts?: RequestOpts): Promise<T>;
}

export interface MetricsAuthOptions {
  api: ReviewApi;
  /** The metrics path: the non-resource URL the SubjectAccessReview asks about. */
  path: string;
  /** Monotonic milliseconds for the cache; default performance.now. */
  now?: () => number;
  logger?: Logger;
  /** Default 2 min: longer than usual scrape intervals, so a scraper costs ~nothing per scrape. */
  allowedTtlMs?: number;
  /** Default 30 s. */
  deniedTtlMs?: number;
  /** Default 1,000. */
  maxEntries?: number;
  /** Deadline of a token's reviews, both together; default 5 s. */
  reviewTimeoutMs?: number;
  /** Tokens under review at once; default MAX_REVIEWS_IN_FLIGHT. */
  maxReviewsInFlight?: number;
  /** Reviews of new tokens per second; default REVIEW_RATE. */
  reviewRate?: ReviewRate;
  /** Told of every scrape refused at once: all review slots taken ('busy'), or past the review rate ('rate'). */
  onRefused?: (reason: RefusalReason) => void;
}

export type RefusalReason = 'busy' | 'rate';

/** The answer for one request: 200 lets it through; anything else is sent with `message`. */
export interface AuthOutcome {
  status: 200 | 401 | 403 | 429 | 500 | 503;
  message: string;
  /** The authenticated user, when known (for logs; never the token). */
  user?: string;
  /** For a 503 that the caller may retry soon: the Retry-After header to send. */
  retryAfterSeconds?: number;
}

/** Every review slot was taken, or the review rate reached: the scrape is refused, not queued. */
class ReviewRefused extends Error {
  constructor(readonly reason: RefusalReason) {
    super(reason);
  }
}

interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

interface TokenReview {
  status?: { authenticated?: boolean; user?: UserInfo; error?: string };
}

interface SubjectAccessReview {
  status?: { allowed?: boolean; denied?: boolean; reason?: string; evaluationError?: string };
}

const TOKEN_REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';
const SUBJECT_ACCESS_REVIEWS = '/apis/authorization.k8s.io/v1/subjectaccessreviews';
const BEARER = /^Bearer\s+(\S+)\s*$/i;

export class MetricsAuth {
  private readonly cache: DecisionCache<AuthOutcome>;
  private readonly log: Logger;
  private readonly timeoutMs: number;
  private readonly maxInFlight: number;
  private readonly rate: ReviewRateLimiter;
  private reviewing = 0;

  constructor(private readonly options: MetricsAuthOptions) {
    this.log = options.logger ?? nopLogger;
    this.timeoutMs = options.reviewTimeoutMs ?? 5_000;
    this.maxInFlight = options.maxReviewsInFlight ?? MAX_REVIEWS_IN_FLIGHT;
    const allowed = options.allowedTtlMs ?? 120_000;
    const denied = options.deniedTtlMs ?? 30_000;
    const now = options.now ?? (() => performance.now());
    this.cache = new DecisionCache<AuthOutcome>({
      ttlMs: (o) => (o.status === 200 ? allowed : denied),
      classOf: (o) => (o.status === 200 ? 'allowed' : 'denied'),
      maxEntries: options.maxEntries ?? 1_000,
      now,
    });
    this.rate = new ReviewRateLimiter(options.reviewRate ?? REVIEW_RATE, now);
  }

  /** Tokens under review now (at most maxReviewsInFlight). */
  get reviewsInFlight(): number {
    return this.reviewing;
  }

  /** Decides whether `req` may read the metrics. Never rejects. */
  async check(req: IncomingMessage): Promise<AuthOutcome> {
    const header = req.headers.authorization;
    const token = header ? BEARER.exec(header)?.[1] : undefined;
    if (!token) return { status: 401, message: 'Unauthorized: a bearer token is required' };
    const key = createHash('sha256').update(token).digest('hex');
    // No address: the client is gone already; its scrapes share one bucket.
    const address = req.socket?.remoteAddress ?? '';
    try {
      return await this.cache.get(key, (expired) => this.reviewInSlot(token, address, expired?.status === 200));
    } catch (err) {
      if (err instanceof ReviewRefused) {
        // Not logged: a flood would flood the log; the refusals are counted instead.
        this.options.onRefused?.(err.reason);
        return err.reason === 'busy'
          ? {
              status: 503,
              message: 'Service Unavailable: too many scrapes with new tokens are being reviewed; try again',
              retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS,
            }
          : {
              status: 429,
              message: 'Too Many Requests: too many scrapes with new tokens; try again',
              retryAfterSeconds: BUSY_RETRY_AFTER_SECONDS,
            };
      }
      // Not cached (DecisionCache keeps no failures): the next scrape asks again.
      const transient = isTransient(err);
      this.log.warn('metrics: could not review a scraper’s access', { error: describeError(err) });
      return {
        status: transient ? 503 : 500,
        message: transient
          ? 'Service Unavailable: the API server could not review the request; try again'
          : 'Internal Server Error: the request could not be reviewed (see the operator log)',
      };
    }
  }

  /**
   * The reviews of `token` in one of the slots, or ReviewRefused at once when none is free or,
   * unless it renews an approval, the review rate of `address` or overall is reached.
   */
  private async reviewInSlot(token: string, address: string, renewal: boolean): Promise<AuthOutcome> {
    if (this.reviewing >= this.maxInFlight) throw new ReviewRefused('busy');
    if (!renewal && !this.rate.tryTake(address)) throw new ReviewRefused('rate');
    this.reviewing++;
    try {
      return await this.review(token, performance.now() + this.timeoutMs);
    } finally {
      this.reviewing--;
    }
  }

  /** deadline: performance.now() by which both reviews must have answered. */
  private async review(token: string, deadline: number): Promise<AuthOutcome> {
    // The SubjectAccessReview gets what the TokenReview left of the deadline (RestClient rejects
    // a request whose deadline has passed as a transient error: 503, not cached).
    const opts = (): { timeoutMs: number } => ({ timeoutMs: Math.max(1, Math.ceil(deadline - performance.now())) });
    const tr = await this.options.api.request<TokenReview>('POST', TOKEN_REVIEWS, {
      ...opts(),
      body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token } },
    });
    const user = tr.status?.user;
    if (!tr.status?.authenticated || !user?.username) {
      this.log.info('metrics: a scrape with a token the API server does not accept was refused', {
        reason: tr.status?.error ?? 'not authenticated',
      });
      return { status: 401, message: 'Unauthorized: the bearer token was not accepted' };
    }
    const sar = await this.options.api.request<SubjectAccessReview>('POST', SUBJECT_ACCESS_REVIEWS, {
      ...opts(),
      body: {
        apiVersion: 'authorization.k8s.io/v1',
        kind: 'SubjectAccessReview',
        spec: {
          user: user.username,
          uid: user.uid,
          groups: user.groups,
          extra: user.extra,
          nonResourceAttributes: { path: this.options.path, verb: 'get' },
        },
      },
    });
    if (!sar.status?.allowed) {
      this.log.info('metrics: a scraper without the right to read them was refused', {
        user: user.username,
        reason: sar.status?.reason ?? sar.status?.evaluationError ?? '',
      });
      return {
        status: 403,
        message: `Forbidden: user "${user.username}" may not get ${this.options.path} (bind it to the metrics-reader ClusterRole)`,
        user: user.username,
      };
    }
    return { status: 200, message: 'OK', user: user.username };
  }
}
