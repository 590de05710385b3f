/**
 * The watch faults: what a replica's watches show it, perturbed line by line (one watch event per
 * JSON line, never buffered whole), the way Sieve perturbs a controller's view of the cluster.
 *
 * Each event of the server goes, in order: drop (the next `count` events that `pick` selects are
 * never passed on) -> merge (a MODIFIED event is held per object for the merge window; a later
 * event of the same object replaces it, so only the last one is passed on) -> delay (passed on
 * `delayMs` after it arrived) -> the client. Order is kept: an event never overtakes one that
 * reached the delay before it, whatever the settings do meanwhile. Settings are read when an event
 * arrives, so they act on watches already open as well as on new ones.
 *
 * Guarantees: a stream that ends (the server's end, or expire()) passes on every event it still
 * holds, then ends; stop() clears its timers and passes nothing more on.
 */
import { performance } from 'node:perf_hooks';
import { noEffects, type ProxyEffects, type WatchBacklog, type WatchEvent } from './types.js';
import { EXPIRED_EVENT_LINE } from './status.js';

/** The default of dropWatchEvents: events about objects (not BOOKMARK or ERROR). */
export const isObjectEvent = (e: WatchEvent): boolean => e.type === 'ADDED' || e.type === 'MODIFIED' || e.type === 'DELETED';

/** The watch faults in force, one set per proxy, shared by all its watches. */
export class WatchFaults {
  delayMs = 0;
  /** Which watches are delayed, by request path (no query); all when absent. */
  delayMatch: RegExp | undefined;
  dropCount = 0;
  dropPick: (e: WatchEvent) => boolean = isObjectEvent;
  mergeMs = 0;
  /** Which watches merge, by request path (no query); all when absent. */
  mergeMatch: RegExp | undefined;
  /** Hears of every event as it is passed on to the client (what the replica's cache gets, and when). */
  delivered: ((path: string, event: WatchEvent) => void) | undefined;
  /** What the faults did so far, over every watch of the proxy (and the proxy's own refusals). */
  readonly effects: ProxyEffects = noEffects();

  delayFor(path: string): number {
    return this.delayMs > 0 && (!this.delayMatch || this.delayMatch.test(path)) ? this.delayMs : 0;
  }

  mergeFor(path: string): number {
    return this.mergeMs > 0 && (!this.mergeMatch || this.mergeMatch.test(path)) ? this.mergeMs : 0;
  }

  /** Whether to drop this event (counted against dropCount when so). */
  takeDrop(event: WatchEvent | undefined): boolean {
    if (this.dropCount <= 0 || !event || !this.dropPick(event)) return false;
    this.dropCount--;
    this.effects.eventsDropped++;
    return true;
  }
}

export interface WatchSink {
  write(line: string): void;
  end(): void;
}

const parse = (line: string): WatchEvent | undefined => {
  try {
    const e = JSON.parse(line) as WatchEvent;
    return typeof e === 'object' && e !== null && typeof e.type === 'string' ? e : undefined;
  } catch {
    return undefined;
  }
};

/** The object an event is about, for merging; undefined for events without a named object. */
const objectKey = (e: WatchEvent | undefined): string | undefined => {
  const name = e?.object?.metadata?.name;
  return name ? `${e.object.kind ?? ''}/${e.object.metadata?.namespace ?? ''}/${name}` : undefined;
};

/** Whether a watch line is the server's 410 ERROR event (cheap: the line is parsed only when it may be). */
function isExpiredLine(line: string): boolean {
  if (!line.includes('"ERROR"') || !line.includes('410')) return false;
  const e = parse(line);
  return e?.type === 'ERROR' && (e.object as { code?: number }).code === 410;
}

/** Node's timers may fire up to a millisecond before performance.now() says the time has come. */
const TIMER_SLACK_MS = 1;

/** One watch response, from the server's bytes to the client's lines. */
export class WatchStream {
  private partial = '';
  /** Events on their way to the client, each with the time it is due, in order. */
  private readonly queue: { line: string; due: number; arrived: number }[] = [];
  private timer: NodeJS.Timeout | undefined;
  /** MODIFIED events held by the merge, per object, in the order they were first held. */
  private readonly held = new Map<string, { line: string; timer: NodeJS.Timeout }>();
  /** No more events from the server (it ended, or the stream was expired). */
  private ending = false;
  private stopped = false;

  constructor(
    private readonly path: string,
    private readonly faults: WatchFaults,
    private readonly sink: WatchSink,
  ) {}

  /** A chunk of the server's stream: its whole lines go on, the rest waits for the next chunk. */
  receive(chunk: Buffer): void {
    if (this.ending || this.stopped) return;
    const lines = (this.partial + chunk.toString('utf8')).split('\n');
    this.partial = lines.pop()!;
    for (const line of lines) if (line !== '') this.arrive(line);
  }

  /** The server ended the stream. */
  serverEnded(): void {
    if (this.ending || this.stopped) return;
    if (this.partial !== '') this.arrive(this.partial);
    this.finish();
  }

  /** Ends the stream with the 410 ERROR event, after what it already holds; the server's later events are ignored. */
  expire(): void {
    if (this.ending || this.stopped) return;
    this.faults.effects.expiredByProxy++;
    this.finish(EXPIRED_EVENT_LINE);
  }

  /** The events this stream holds back from the client now. */
  backlog(): WatchBacklog {
    const now = performance.now();
    const oldest = this.queue[0]?.arrived;
    return { events: this.queue.length + this.held.size, oldestMs: oldest === undefined ? 0 : Math.round(now - oldest) };
  }

  /** Passes nothing more on and clears every timer. */
  stop(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    for (const h of this.held.values()) clearTimeout(h.timer);
    this.held.clear();
    this.queue.length = 0;
  }

  private finish(lastLine?: string): void {
    this.ending = true;
    for (const key of [...this.held.keys()]) this.unhold(key);
    if (lastLine) this.enqueue(lastLine, 0);
    this.pump();
  }

  private arrive(line: string): void {
    if (isExpiredLine(line)) this.faults.effects.expiredByServer++;
    const mergeMs = this.faults.mergeFor(this.path);
    const needsEvent = this.faults.dropCount > 0 || mergeMs > 0 || this.held.size > 0;
    const event = needsEvent ? parse(line) : undefined;
    if (this.faults.takeDrop(event)) return;
    const key = objectKey(event);
    const heldNow = key === undefined ? undefined : this.held.get(key);
    if (event?.type === 'MODIFIED' && key !== undefined && (heldNow || mergeMs > 0)) {
      if (heldNow) {
        heldNow.line = line;
        this.faults.effects.eventsMerged++;
      } else
        this.held.set(key, {
          line,
          timer: setTimeout(() => {
            this.unhold(key);
            this.pump();
          }, mergeMs),
        });
      return;
    }
    if (heldNow && key !== undefined) {
      // A later event of the object (DELETED, ADDED again) supersedes the MODIFIED held for it.
      clearTimeout(heldNow.timer);
      this.held.delete(key);
      this.faults.effects.eventsMerged++;
    }
    this.enqueue(line, this.faults.delayFor(this.path));
    this.pump();
  }

  /** Moves the MODIFIED event held for `key` to the queue (the caller pumps). */
  private unhold(key: string): void {
    const h = this.held.get(key);
    if (!h) return;
    clearTimeout(h.timer);
    this.held.delete(key);
    this.enqueue(h.line, this.faults.delayFor(this.path));
  }

  private enqueue(line: string, delayMs: number): void {
    const tail = this.queue.at(-1)?.due ?? 0;
    const now = performance.now();
    if (delayMs > 0) this.faults.effects.eventsDelayed++;
    this.queue.push({ line, due: Math.max(now + delayMs, tail), arrived: now });
  }

  /** Passes on every event that is due, then waits for the next; ends the client's stream once all is passed on. */
  private pump(): void {
    if (this.stopped || this.timer) return;
    const now = performance.now();
    while (this.queue.length && this.queue[0]!.due <= now + TIMER_SLACK_MS) {
      const line = this.queue.shift()!.line;
      this.sink.write(`${line}\n`);
      const event = this.faults.delivered && parse(line);
      if (event) this.faults.delivered!(this.path, event);
    }
    const next = this.queue[0];
    if (next) {
      this.timer = setTimeout(() => {
        this.timer = undefined;
        this.pump();
      }, next.due - now);
      return;
    }
    if (this.ending && this.held.size === 0) {
      this.stopped = true;
      this.sink.end();
    }
  }
}
