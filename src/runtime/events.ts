/**
 * What reconcilers tell users through Kubernetes Events (client-go's record.EventRecorder): the
 * one interface reconcilers record through. observability/events implements it against the API
 * server; runtime/testing/events.ts keeps events in memory for tests.
 */

export type EventType = 'Normal' | 'Warning';

/** The object an event is about: any Kubernetes object will do. */
export interface EventSubject {
  apiVersion?: string;
  kind?: string;
  metadata?: { name?: string; namespace?: string; uid?: string; resourceVersion?: string };
}

export interface EventRecorder {
  /** Records an event about `object`; returns at once and never throws. reason is UpperCamelCase, e.g. JobCreated. */
  recordEvent(object: EventSubject, type: EventType, reason: string, message: string): void;
}

/** Records nothing: where no API server is at hand. */
export const nopEventRecorder: EventRecorder = { recordEvent() {} };
