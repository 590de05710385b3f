/**
 * One request through the fault proxy: the client's side, the server's side once forwarded, and
 * (for a watch) the stream that perturbs its events. The proxy keeps every open exchange, so that
 * a partition can freeze them all and close() can end them all.
 *
 * Guarantees: a frozen exchange moves no byte either way (the client's body stops reaching the
 * server, the server's answer stops reaching the client) until it is destroyed; the client going
 * away ends the server's side too, except while frozen (a partition: the server does not hear of
 * it); destroy() leaves no socket or timer of the exchange behind.
 */
import type { ClientRequest, IncomingMessage, ServerResponse } from 'node:http';
import { endToEndHeaders, type Upstream } from './upstream.js';
import type { ProxyEffects, WatchBacklog } from './types.js';
import { WatchStream, type WatchFaults } from './watch.js';

/**
 * What becomes of the server's answer to a request (a fault's choice, made when its head arrives):
 * passed on `holdMs` late (a slow answer), or replaced (the proxy answers in its stead, or resets
 * the connection: an ambiguous outcome); undefined: passed on at once.
 */
export type AnswerFate = { holdMs: number } | { replace: (res: ServerResponse) => void } | undefined;

export class Exchange {
  private up: ClientRequest | undefined;
  private answer: IncomingMessage | undefined;
  private stream: WatchStream | undefined;
  private frozenNow = false;
  /** The proxy ended the server's side on purpose (an expired watch): its errors mean nothing. */
  private detached = false;
  /** A slow answer's wait before it is passed on (AnswerFate holdMs). */
  private holdTimer: NodeJS.Timeout | undefined;

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    /** The request's path without its query. */
    readonly path: string,
    readonly watch: boolean,
    /** Where a cut connection or a frozen request is counted. */
    private readonly effects: ProxyEffects,
  ) {}

  get frozen(): boolean {
    return this.frozenNow;
  }

  /** Whether this is a watch whose events flow (or will flow, once the server answers). */
  get openWatch(): boolean {
    return this.watch && !this.detached && !this.res.writableEnded;
  }

  /**
   * Sends the request to the server. `answered` runs when the server's answer head arrives, before
   * anything of it is passed on (the write log's callbacks run there).
   */
  forward(upstream: Upstream, faults: WatchFaults, answered: (status: number) => AnswerFate): void {
    const up = upstream.request(this.req, { watch: this.watch });
    this.up = up;
    up.on('response', (answer) => {
      this.answer = answer;
      const status = answer.statusCode ?? 502;
      const fate = answered(status);
      answer.on('error', () => this.serverFailed());
      if (this.frozenNow || this.detached) {
        answer.pause();
        return;
      }
      if (fate && 'replace' in fate) {
        answer.resume();
        fate.replace(this.res);
        return;
      }
      if (fate?.holdMs) {
        answer.pause();
        this.holdTimer = setTimeout(() => {
          this.holdTimer = undefined;
          if (!this.frozenNow && !this.detached && !this.res.destroyed) this.passOn(answer, status, faults);
        }, fate.holdMs);
        return;
      }
      this.passOn(answer, status, faults);
    });
    up.on('error', () => this.serverFailed());
    this.req.pipe(up);
  }

  /** Passes the server's answer on to the client: a watch through its stream, anything else as it is. */
  private passOn(answer: IncomingMessage, status: number, faults: WatchFaults): void {
    this.res.writeHead(status, endToEndHeaders(answer.headers));
    if (this.watch && status === 200 && /json/.test(answer.headers['content-type'] ?? '')) {
      const stream = new WatchStream(this.path, faults, {
        write: (line) => this.res.write(line),
        end: () => {
          this.res.end();
          this.detach();
        },
      });
      this.stream = stream;
      // The client learns at once that its watch is open, as from the server, not with the first event.
      this.res.flushHeaders();
      answer.on('data', (chunk: Buffer) => stream.receive(chunk));
      answer.on('end', () => stream.serverEnded());
    } else answer.pipe(this.res);
  }

  /** Ends an open watch with the 410 ERROR event, after what it holds; one not yet answered gets it instead of the server's answer. */
  expire(answerExpired: (res: ServerResponse) => void): void {
    if (!this.openWatch || this.frozenNow) return;
    if (this.stream) this.stream.expire();
    else if (!this.answer) {
      this.detach();
      this.effects.expiredByProxy++;
      answerExpired(this.res);
    }
    // else: the server refused the watch (not a stream): its short answer goes on as it is.
  }

  /** What a watch holds back from the client now (none for other requests). */
  backlog(): WatchBacklog {
    return this.stream?.backlog() ?? { events: 0, oldestMs: 0 };
  }

  /** The partition: no more bytes either way. */
  freeze(): void {
    if (!this.frozenNow && !this.res.writableEnded) this.effects.held++;
    this.frozenNow = true;
    if (this.up) this.req.unpipe(this.up);
    this.req.pause();
    if (this.answer) {
      this.answer.unpipe(this.res);
      this.answer.pause();
    }
    this.stream?.stop();
  }

  /** The client went away (or its answer is complete). */
  clientClosed(): void {
    if (this.frozenNow) return;
    clearTimeout(this.holdTimer);
    this.stream?.stop();
    this.detach();
  }

  destroy(): void {
    clearTimeout(this.holdTimer);
    this.stream?.stop();
    this.detach();
    this.res.destroy();
  }

  private serverFailed(): void {
    if (this.detached || this.frozenNow) return;
    this.effects.cut++;
    this.stream?.stop();
    this.res.destroy();
  }

  /** Ends the server's side, unless its answer is complete (its socket is back in the pool, maybe serving another request). */
  private detach(): void {
    this.detached = true;
    if (this.up && !this.answer?.complete) this.up.destroy();
  }
}
