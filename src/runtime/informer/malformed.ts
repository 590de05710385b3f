/**
 * What makes a listed object or a watch event unusable, and what the reflector does about it, as
 * client-go splits it:
 *  - a watch line that does not decode (not JSON, not an event: an unknown type, or an object
 *    that is not a JSON object) makes apimachinery's StreamWatcher end the watch with an error,
 *    so the reflector re-watches from the last resourceVersion it applied and the server sends
 *    the event again (endsWatch). Skipping it instead would lose the change for good: the next
 *    event moves the resourceVersion past it, and the cache keeps the old object until a 410;
 *  - an event that decodes but cannot be cached (an object of another apiVersion or kind, or
 *    without a name) is reported and skipped by client-go's watchHandler, and the watch goes on;
 *    the reflector counts and skips it too, so it never reaches the cache, where an object
 *    without a name cannot even be keyed. A listed item of any malformed kind is skipped.
 *
 * Guarantees: a pure function of the event; never throws, whatever the event holds (null, a
 * number, an array), so a hostile or broken stream cannot make the check itself fail.
 */
import type { WatchEvent } from './listwatch.js';

/**
 * 'unparseable': a stream line that is not a JSON object; 'no-object': the event's object is
 * missing or not a JSON object; 'no-name': no metadata.name (a bookmark needs none);
 * 'wrong-kind': apiVersion or kind is not the informer's; 'unknown-type': not ADDED, MODIFIED,
 * DELETED, BOOKMARK or ERROR.
 */
export type MalformedReason = 'unparseable' | 'no-object' | 'no-name' | 'wrong-kind' | 'unknown-type';

export const MALFORMED_REASONS: readonly MalformedReason[] = ['unparseable', 'no-object', 'no-name', 'wrong-kind', 'unknown-type'];

/** The apiVersion and kind every object of an informer must carry. */
export interface ExpectedType {
  apiVersion: string;
  kind: string;
}

/** Reasons that end the watch (the line did not decode) instead of being skipped. */
const UNDECODABLE: ReadonlySet<MalformedReason> = new Set<MalformedReason>(['unparseable', 'no-object', 'unknown-type']);

/** Whether a watch event malformed for `reason` ends the watch (true) or is skipped (false). */
export function endsWatch(reason: MalformedReason): boolean {
  return UNDECODABLE.has(reason);
}

const EVENT_TYPES = new Set(['ADDED', 'MODIFIED', 'DELETED', 'BOOKMARK']);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Why a listed object (or a watched one) cannot be cached; undefined when it can. */
export function malformedObject(obj: unknown, expected: ExpectedType | undefined): MalformedReason | undefined {
  if (!isObject(obj)) return 'no-object';
  const meta = obj.metadata;
  if (!isObject(meta) || typeof meta.name !== 'string' || meta.name === '') return 'no-name';
  if (expected && (obj.apiVersion !== expected.apiVersion || obj.kind !== expected.kind)) return 'wrong-kind';
  return undefined;
}

/** Why a watch event (other than ERROR, which ends the watch) cannot be applied; undefined when it is sound. */
export function malformedWatchEvent(event: WatchEvent<unknown>, expected: ExpectedType | undefined): MalformedReason | undefined {
  if (!isObject(event)) return 'unparseable';
  const type = event.type as string;
  if (type === 'UNPARSEABLE') return 'unparseable';
  if (type === 'ERROR') return undefined; // its Status ends the watch (listwatch.ts), whatever it holds
  if (!EVENT_TYPES.has(type)) return 'unknown-type';
  // A bookmark carries only metadata.resourceVersion: no name, and nothing is cached from it.
  if (type === 'BOOKMARK') return isObject(event.object) ? undefined : 'no-object';
  return malformedObject(event.object, expected);
}
