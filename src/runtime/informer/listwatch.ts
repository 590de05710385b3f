/**
 * ListerWatcher: the two API calls an informer is built on, behind an interface so the reflector
 * can be tested against a fake, and kubeListerWatcher, which makes them over RestClient.
 *
 * Guarantees of kubeListerWatcher:
 *  - list() returns one page; items carry apiVersion and kind (the server omits them inside a
 *    List but sends them in watch events, and cached objects should look the same either way).
 *  - watch() hands events to onEvent in stream order and resolves when the server ends the
 *    stream (its timeoutSeconds passed) or `signal` aborts. It never passes an ERROR event on:
 *    the Status inside becomes the ApiError watch() rejects with, so a 410 Gone ("too old
 *    resource version") arrives as an ApiError with code 410 (isGone), like a 410 answer would.
 *  - A line that is not JSON rejects with an ApiError of code 0 (a broken stream, transient);
 *    a throw from onEvent ends the stream and watch() rejects with that very error.
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

/** For BOOKMARK, object carries only metadata.resourceVersion; for ERROR, a Status. */
export type WatchEvent<T> = { type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK'; object: T } | { type: 'ERROR'; object: StatusBody };

export interface ListerWatcher<T> {
  list(options: ListOptions, signal?: AbortSignal): Promise<ListResult<T>>;
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

  return {
    async list(opts, signal) {
      const query: Query = { ...selectors, limit: opts.limit || undefined, continue: opts.continue };
      const body = await rest.request<ListBody<T>>('GET', path, { query, signal, timeoutMs: LIST_TIMEOUT_MS });
      const items = body.items ?? [];
      for (const item of items) {
        item.apiVersion ??= apiVersion;
        item.kind ??= type.kind;
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
            fail(new ApiError(0, 'MalformedWatchEvent', `watch ${path}: not JSON: ${line.slice(0, 200)}`));
            return;
          }
          if (event.type === 'ERROR') {
            fail(watchEventError(event.object));
            return;
          }
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
