/**
 * The late class's half in the fault proxy (classes/late.ts says what the class is):
 *  - holdNext: the next write a predicate selects (after `skip` of them) is taken whole and kept,
 *    never forwarded, until deliver(): then it goes to the server as it was sent, with an Audit-ID
 *    header the proxy chose (kube-apiserver logs a client's Audit-ID as the request's auditID), so
 *    the judge can find it in the audit log. Its answer is dropped and the replica's connection
 *    destroyed: a replica cut off meanwhile never learns the outcome.
 *  - slowAnswers: until a deadline, the answers to requests a predicate selects are passed on
 *    `holdMs` after the server gave them (proxy/exchange.ts AnswerFate).
 *
 * Guarantees: a held request is forwarded once at most; deliver() settles (status 0 when the
 * server did not answer within DELIVERY_TIMEOUT_MS); close() destroys a held request's
 * connection and forgets it, so nothing of it outlives the proxy.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { AnswerFate } from './exchange.js';
import type { Upstream } from './upstream.js';

export type RequestPick = (method: string, path: string) => boolean;

/** How long a delivered write may wait for the server's answer. */
const DELIVERY_TIMEOUT_MS = 30_000;

/** A write the proxy holds. */
export interface HeldWrite {
  verb: string;
  /** The request's path, without the query. */
  path: string;
  /** Date.now() when the proxy took it. */
  heldAt: number;
  /** Sends it to the server now; resolves with the server's status (0: the connection failed) and the Audit-ID it carried. */
  deliver(): Promise<{ status: number; auditID: string; deliveredAt: number }>;
}

/** An answer passed on late. */
export interface SlowAnswer {
  verb: string;
  path: string;
  status: number;
  heldMs: number;
}

export class LateWrites {
  private plan: { pick: RequestPick; skip: number; take: (h: HeldWrite) => void } | undefined;
  private slow: { pick: RequestPick; holdMs: number; until: number } | undefined;
  private readonly heldResponses = new Set<ServerResponse>();
  /** Answers slowAnswers held so far. */
  readonly slowAnswers: SlowAnswer[] = [];

  constructor(private readonly upstream: Upstream) {}

  /** Resolves with the write it holds: the next one `pick` selects, after `skip` of them. */
  holdNext(pick: RequestPick, skip: number): Promise<HeldWrite> {
    return new Promise((take) => {
      this.plan = { pick, skip, take };
    });
  }

  /** For `ms` from now: the answers to requests `pick` selects reach the client `holdMs` late. */
  slowDown(pick: RequestPick, holdMs: number, ms: number): void {
    this.slow = ms > 0 ? { pick, holdMs, until: performance.now() + ms } : undefined;
  }

  /** The proxy's hook on every request: true when this one is taken (held, not forwarded). */
  take(req: IncomingMessage, res: ServerResponse, path: string): boolean {
    const method = req.method ?? 'GET';
    const plan = this.plan;
    if (!plan || !plan.pick(method, path)) return false;
    if (plan.skip > 0) {
      plan.skip--;
      return false;
    }
    this.plan = undefined;
    const body: Buffer[] = [];
    const received = new Promise<void>((resolve) => {
      req.on('data', (c: Buffer) => body.push(c));
      req.on('end', resolve);
      // A replica killed mid-body: what came is what is delivered (an incomplete body the server refuses).
      req.on('close', resolve);
      req.on('error', resolve);
    });
    this.heldResponses.add(res);
    res.once('close', () => this.heldResponses.delete(res));
    let delivered: ReturnType<HeldWrite['deliver']> | undefined;
    plan.take({
      verb: method,
      path,
      heldAt: Date.now(),
      deliver: () => (delivered ??= received.then(() => this.send(req, res, Buffer.concat(body)))),
    });
    return true;
  }

  /** The proxy's hook on every answer: how long to hold it. */
  answerFate(method: string, path: string, status: number): AnswerFate {
    const slow = this.slow;
    if (!slow) return undefined;
    if (performance.now() >= slow.until) {
      this.slow = undefined;
      return undefined;
    }
    if (!slow.pick(method, path)) return undefined;
    this.slowAnswers.push({ verb: method, path, status, heldMs: slow.holdMs });
    return { holdMs: slow.holdMs };
  }

  close(): void {
    this.plan = undefined;
    this.slow = undefined;
    for (const res of this.heldResponses) res.destroy();
    this.heldResponses.clear();
  }

  private send(req: IncomingMessage, res: ServerResponse, body: Buffer): Promise<{ status: number; auditID: string; deliveredAt: number }> {
    const auditID = randomUUID();
    req.headers['audit-id'] = auditID;
    const deliveredAt = Date.now();
    return new Promise((resolve) => {
      const up = this.upstream.request(req, { watch: false });
      const done = (status: number): void => {
        res.destroy();
        resolve({ status, auditID, deliveredAt });
      };
      up.on('response', (answer) => {
        answer.resume();
        done(answer.statusCode ?? 0);
      });
      up.on('error', () => done(0));
      // An API server that never answers (restarting) must not hold the schedule: 0, as a failed connection.
      up.setTimeout(DELIVERY_TIMEOUT_MS, () => up.destroy());
      up.end(body);
    });
  }
}
