/**
 * Where the recorder's Events go: the API server (restEventSink), or a fake in tests. Errors are
 * ApiErrors, which the recorder sorts into retryable and not.
 */
import { EVENTS, type EventType, resourcePath, type RestClient } from '../../runtime/index.js';

/** A core/v1 Event as the recorder writes it. */
export interface CoreEvent {
  apiVersion: 'v1';
  kind: 'Event';
  metadata: { name: string; namespace: string };
  involvedObject: { apiVersion: string; kind: string; name: string; namespace?: string; uid?: string; resourceVersion?: string };
  type: EventType;
  reason: string;
  message: string;
  source: { component: string };
  firstTimestamp: string;
  lastTimestamp: string;
  count: number;
  reportingComponent: string;
  reportingInstance: string;
}

export interface EventCountPatch {
  count: number;
  lastTimestamp: string;
  message: string;
}

/** Where Events go: the API server, or a fake in tests. Errors are ApiErrors. */
export interface EventSink {
  create(event: CoreEvent, signal: AbortSignal): Promise<void>;
  patch(namespace: string, name: string, patch: EventCountPatch, signal: AbortSignal): Promise<void>;
}

/** Writes Events through the operator's RestClient. */
export function restEventSink(rest: Pick<RestClient, 'request'>): EventSink {
  return {
    async create(event, signal) {
      await rest.request('POST', resourcePath(EVENTS, event.metadata.namespace), { body: event, signal, timeoutMs: 10_000 });
    },
    async patch(namespace, name, patch, signal) {
      await rest.request('PATCH', resourcePath(EVENTS, namespace, name), {
        body: patch,
        contentType: 'application/merge-patch+json',
        signal,
        timeoutMs: 10_000,
      });
    },
  };
}
