/**
 * What makes a listed object or a watch event unusable, as client-go's reflector checks it
 * (watchHandler: an object of the wrong type or GroupVersionKind, or one without metadata, is
 * reported and skipped; the watch goes on). The reflector counts and skips such an event instead
 * of letting it reach the cache, where an object without a name cannot even be keyed.
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

/** Why a watch event (other than ERROR, which ends the watch) must be skipped; undefined when it is sound. */
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
