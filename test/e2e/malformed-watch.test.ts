/**
 * A watch stream carrying malformed events (issue 20, item 4): injected into the operator's Echos
 * watch through a proxy, between two of the server's events. Each is counted in
 * informer_malformed_events_total, logged without its content, and skipped; the same watch goes
 * on, and an Echo created afterwards is reconciled. Before, a null object made the informer fail
 * and the process stop.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { watchProxy } from '../support/apiwatchproxy.js';
import { metricValue } from '../support/faults.js';
import { applyEcho, eventually, jobsOf, testNamespace } from '../support/kube.js';
import { installCrds, startOperator, waitReady } from '../support/operator.js';

test('malformed events in the Echos watch are counted and skipped; the operator keeps reconciling', { timeout: 120_000 }, async (t) => {
  installCrds();
  const ns = testNamespace(t, 'malformed');
  const proxy = await watchProxy(t, { watches: /\/echos$/ });
  const op = await startOperator(t, { KUBECONFIG: proxy.kubeconfig, WATCH_NAMESPACES: ns, NAMESPACE: ns, LOG_LEVEL: 'info' });
  await waitReady(op);
  const informer = `echos/${ns}`;
  const secret = 'do-not-log-me';
  const events = [
    { type: 'ADDED', object: null },
    { type: 'MODIFIED', object: { apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', metadata: { namespace: ns, resourceVersion: '1' } } },
    {
      type: 'ADDED',
      object: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'intruder', namespace: ns, resourceVersion: '1' },
        data: { secret },
      },
    },
  ].map((e) => JSON.stringify(e));
  const lines = [...events, `{"type":"ADDED","object":{"metadata":{"name":"${secret}"`].join('\n');

  // Once the watch is open (the proxy has a stream to write into): all four, at once, in one go.
  await eventually('the Echos watch to be open', () => proxy.inject(lines) > 0, 30_000, 100);
  const watchesBefore = await metricValue(op, 'informer_watches_total', { informer });
  await eventually(
    'four malformed events counted',
    async () =>
      (await metricValue(op, 'informer_malformed_events_total', { informer, reason: 'no-object' })) === 1 &&
      (await metricValue(op, 'informer_malformed_events_total', { informer, reason: 'no-name' })) === 1 &&
      (await metricValue(op, 'informer_malformed_events_total', { informer, reason: 'wrong-kind' })) === 1 &&
      (await metricValue(op, 'informer_malformed_events_total', { informer, reason: 'unparseable' })) === 1,
    30_000,
  );

  applyEcho(ns, 'after', 'still here');
  await eventually('the Job of an Echo created after them', () => jobsOf(ns, 'after').length === 1, 60_000);
  assert.equal(op.proc.exitCode, null, 'the operator runs on');
  assert.equal(await metricValue(op, 'informer_watches_total', { informer }), watchesBefore, 'the same watch went on');
  for (const reason of ['error', 'short', 'gone']) {
    assert.equal(await metricValue(op, 'informer_watch_errors_total', { informer, reason }), 0, `no watch error (${reason})`);
  }
  const warnings = op
    .output()
    .split('\n')
    .filter((l) => l.includes('skipping a malformed watch event'));
  assert.equal(warnings.length, 4, 'one warning per malformed event');
  assert.ok(!op.output().includes(secret), 'what the events carried is not logged');
  assert.ok(!/informer failed/.test(op.output()));
});
