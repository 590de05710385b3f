/**
 * The event recorder against a real API server: identical events become one Event whose count
 * grows, and a burst on one object is cut down by the per-object spam filter.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RestClient, loadKubeConfig } from '../../src/kube/index.js';
import { KubeEventRecorder, restEventSink } from '../../src/observability/events/index.js';
import type { EventSubject } from '../../src/runtime/events.js';
import { eventually, kubeconfig, kubectlJson, kubectlOk, testNamespace } from '../support/kube.js';

interface EventList {
  items: { metadata: { name: string }; reason: string; message: string; count: number; type: string; source: { component: string } }[];
}

function setup(t: import('node:test').TestContext, prefix: string): { ns: string; target: EventSubject; recorder: KubeEventRecorder } {
  const ns = testNamespace(t, prefix);
  kubectlOk(['create', 'configmap', 'target', '--from-literal=greeting=hola'], { namespace: ns });
  const target = kubectlJson<EventSubject>(['get', 'configmap', 'target'], { namespace: ns });
  const rest = new RestClient(loadKubeConfig(kubeconfig()), { userAgent: 'echoperator-e2e' });
  const recorder = new KubeEventRecorder({ sink: restEventSink(rest), instance: 'e2e' });
  t.after(async () => {
    await recorder.close();
    rest.close();
  });
  return { ns, target, recorder };
}

function eventsOf(ns: string): EventList['items'] {
  return kubectlJson<EventList>(['get', 'events', '--field-selector', 'involvedObject.name=target'], { namespace: ns }).items;
}

test('three identical events show as one Event with count 3', async (t) => {
  const { ns, target, recorder } = setup(t, 'events-agg');
  for (let i = 0; i < 3; i++) {
    recorder.recordEvent(target, 'Warning', 'ProbeFailed', 'the greeting is too short');
    // Flushing between records makes the second and third go through PATCH, not a merged create.
    assert.equal(await recorder.flush(10_000), true);
  }
  const events = await eventually('one Event with count 3', () => {
    const items = eventsOf(ns);
    return items.length === 1 && items[0]!.count === 3 ? items : undefined;
  });
  assert.equal(events[0]!.reason, 'ProbeFailed');
  assert.equal(events[0]!.type, 'Warning');
  assert.equal(events[0]!.source.component, 'echoperator');
  assert.deepEqual(recorder.stats, { recorded: 3, created: 1, patched: 2, droppedSpam: 0, droppedQueueFull: 0, failed: 0 });
  // What a user sees: kubectl's table lists it once.
  const table = kubectlOk(['get', 'events'], { namespace: ns });
  assert.equal(table.split('\n').filter((l) => l.includes('ProbeFailed')).length, 1);
  assert.match(kubectlOk(['describe', 'configmap', 'target'], { namespace: ns }), /ProbeFailed/);
});

test('a burst of 200 distinct events on one object writes a bounded number', async (t) => {
  const { ns, target, recorder } = setup(t, 'events-burst');
  for (let i = 0; i < 200; i++) recorder.recordEvent(target, 'Normal', `Step${i}`, `step ${i} done`);
  assert.equal(await recorder.flush(30_000), true);
  const items = eventsOf(ns);
  assert.equal(items.length, 25, 'the per-object burst');
  assert.deepEqual(
    items.map((e) => e.reason).sort((a, b) => Number(a.slice(4)) - Number(b.slice(4))),
    Array.from({ length: 25 }, (_, i) => `Step${i}`),
    'the first 25 got through',
  );
  assert.equal(recorder.stats.droppedSpam, 175);
  assert.equal(recorder.stats.failed, 0);
});
