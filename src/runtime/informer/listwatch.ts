/**
 * ListerWatcher: the two API calls an informer is built on, behind an interface so the reflector
 * can be tested against a fake, and kubeListerWatcher, which makes them over RestClient.
 *
 * Guarantees of kubeListerWatcher:
 *  - list() returns one page; items carry apiVersion and kind (the server omits them inside a
 *    List but sends them in watch events, and cached objects should look the same either way).
 *    With `onItem`, the page is decoded as it arrives (kube/listdecode.ts) and each item goes to
 *    onItem as soon as it is parsed, never into the result's `items`: the caller trims one object
 *    at a time and no page is ever held whole, as text or parsed.
 *  - watch() hands events to onEvent in stream order and resolves when the server ends the
 *    stream (its timeoutSeconds passed) or `signal` aborts. It never passes an ERROR event on:
 *    the Status inside becomes the ApiError watch() rejects with, so a 410 Gone ("too old
 *    resource version") arrives as an ApiError with code 410 (isGone), like a 410 answer would.
 *  - A line that is not a JSON object is passed on as an UNPARSEABLE event, in stream order (the
 *    reflector ends the watch there and re-watches, as client-go's StreamWatcher ends a watch
 *    whose event does not decode: see malformed.ts); an object without apiVersion or kind gets
 *    the watched type's, as listed items do. A throw from onEvent ends the stream and watch()
 *    rejects with that very error; aborting `signal` from onEvent ends it at that line.
 */
import { ApiError, type StatusBody } from '../../kube/errors.js';
import type { Query, RestClient } from '../../kube/rest.js';
import { apiVersionOf, resourcePath, type ResourceType } from '../../kube/resources.js';
import type { KubeObject } from '../cache/store.js';

export interface ListOptions {
  /** Page size; undefined or 0 = everything at once. */
  limit?: number;
  /** The previous page's continue token. */
  continue?: string;
}

export interface ListResult<T> {
  items: T[];
  resourceVersion: string;
  /** Set when more pages follow. */
  continue?: string;
}

export interface WatchOptions {
  resourceVersion: string;
  /** The server ends the watch after this long. */
  timeoutSeconds?: number;
  allowWatchBookmarks?: boolean;
}

/**
 * For BOOKMARK, object carries only metadata.resourceVersion; for ERROR, a Status; UNPARSEABLE
 * stands for a stream line that is not a JSON object (its length only: a line is not logged).
 * What the server sends is not checked here: object may be anything (see malformed.ts).
 */
export type WatchEvent<T> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T }
  | { type: 'ERROR'; object: StatusBody }
  | { type: 'UNPARSEABLE'; object?: undefined; length: number };

export interface ListerWatcher<T> {
  /**
   * One page. With onItem, items may be handed to it one by one as they are decoded instead of
   * returned in `items` (unchecked: an item may be anything the server sent); a fake may ignore it.
   */
  list(options: ListOptions, signal?: AbortSignal, onItem?: (item: unknown) => void): Promise<ListResult<T>>;
  /** Resolves when the stream ends normally or signal aborts; rejects on errors (410 = isGone). */
  watch(options: WatchOptions, onEvent: (event: WatchEvent<T>) => void, signal: AbortSignal): Promise<void>;
}

export interface KubeListerWatcherOptions {
  /** Only this namespace; undefined = all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** The ApiError a watch ERROR event stands for (410 Gone when the Status says so). */
export function watchEventError(status: StatusBody | undefined): ApiError {
  const code = typeof status?.code === 'number' ? status.code : 500;
  return new ApiError(code, status?.reason ?? 'WatchError', `watch: ${status?.message ?? 'ERROR event'}`, status);
}

interface ListBody<T> {
  metadata?: { resourceVersion?: string; continue?: string };
  items?: T[];
}

/** A page fetch should be quick; a slow one is retried rather than waited on forever. */
const LIST_TIMEOUT_MS = 60_000;

export function kubeListerWatcher<T extends KubeObject>(
  rest: RestClient,
  type: ResourceType,
  options: KubeListerWatcherOptions = {},
): ListerWatcher<T> {
  const path = resourcePath(type, options.namespace);
  const selectors: Query = { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
  const apiVersion = apiVersionOf(type);
  /** The server leaves apiVersion and kind out of a List's items; fills them in, on objects only. */
  const withType = (item: unknown): unknown => {
    if (typeof item === 'object' && item !== null && !Array.isArray(item)) {
      const o = item as KubeObject;
      o.apiVersion ??= apiVersion;
      o.kind ??= type.kind;
    }
    return item;
  };

  return {
    async list(opts, signal, onItem) {
      const query: Query = { ...selectors, limit: opts.limit || undefined, continue: opts.continue };
      const requestOpts = { query, signal, timeoutMs: LIST_TIMEOUT_MS };
      const body = onItem
        ? await rest.list<ListBody<T>>(path, requestOpts, (item) => onItem(withType(item)))
        : await rest.request<ListBody<T>>('GET', path, requestOpts);
      // Without onItem, or items the decoder could not single out (an escaped "items" key).
      let items = (body.items ?? []).map(withType) as T[];
      if (onItem) {
        for (const item of items) onItem(item);
        items = [];
      }
      return {
        items,
        resourceVersion: body.metadata?.resourceVersion ?? '',
        continue: body.metadata?.continue || undefined,
      };
    },

    async watch(opts, onEvent, signal) {
      const query: Query = {
        ...selectors,
        watch: true,
        resourceVersion: opts.resourceVersion || undefined,
        timeoutSeconds: opts.timeoutSeconds,
        allowWatchBookmarks: opts.allowWatchBookmarks || undefined,
      };
      // Our own controller, so a failure found inside a line can close the stream at once.
      const stop = new AbortController();
      const onAbort = (): void => stop.abort(signal.reason);
      if (signal.aborted) return;
      signal.addEventListener('abort', onAbort, { once: true });
      let failure: { error: unknown } | undefined;
      const fail = (error: unknown): void => {
        failure = { error };
        stop.abort(error);
      };
      try {
        await rest.stream(path, query, stop.signal, (line) => {
          if (failure || stop.signal.aborted) return;
          let event: WatchEvent<T>;
          try {
            event = JSON.parse(line) as WatchEvent<T>;
          } catch {
            event = { type: 'UNPARSEABLE', length: line.length };
          }
          if (typeof event !== 'object' || event === null || Array.isArray(event)) event = { type: 'UNPARSEABLE', length: line.length };
          if (event.type === 'ERROR') {
            fail(watchEventError(event.object));
            return;
          }
          if (event.type !== 'UNPARSEABLE' && event.type !== 'BOOKMARK') withType(event.object);
          try {
            onEvent(event);
          } catch (err) {
            fail(err);
          }
        });
      } catch (err) {
        // Aborting (by us or the caller) may surface as a transport error; the cause is what counts.
        if (!failure && !signal.aborted) throw err;
      } finally {
        signal.removeEventListener('abort', onAbort);
      }
      if (failure) throw failure.error;
    },
  };
}
