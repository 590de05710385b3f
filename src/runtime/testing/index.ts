/**
 * The runtime's test kit: what a unit test of a reconciler runs it with, in place of an API
 * server. FakeClient answers as the API server would (resourceVersions, preconditions, 404 and
 * 409, server-side apply, merge patch); FakeCache is a controller's cache over it;
 * fakeManagerParts gives a declared controller's reconciler exactly the parts a manager would,
 * made of those; FakeClock and FakeEventRecorder stand in for time and Events.
 *
 * A separate entry from the runtime's surface (runtime/index.ts) so that production code never
 * loads a fake: nothing in src/ outside runtime/testing/ imports it (the architecture test says
 * so). Everything this folder exports is the kit.
 *
 * @module runtime/testing
 */
export * from './cache.js';
export * from './client.js';
export * from './clock.js';
export * from './events.js';
export * from './mergepatch.js';
export * from './parts.js';
