/**
 * An EventRecorder that keeps every event in memory, unfiltered, so tests assert what a
 * reconciler recorded (client-go's record.FakeRecorder).
 */
import type { EventRecorder, EventSubject, EventType } from '../events.js';

export interface RecordedEvent {
  object: EventSubject;
  type: EventType;
  reason: string;
  message: string;
}

export class FakeEventRecorder implements EventRecorder {
  readonly events: RecordedEvent[] = [];

  recordEvent(object: EventSubject, type: EventType, reason: string, message: string): void {
    this.events.push({ object, type, reason, message });
  }

  /** "Type Reason message" lines, like client-go's FakeRecorder. */
  lines(): string[] {
    return this.events.map((e) => `${e.type} ${e.reason} ${e.message}`);
  }
}
