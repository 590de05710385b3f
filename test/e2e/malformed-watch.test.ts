/**
 * Malformed events in the operator's Echos watch, through a proxy (test/support/apiwatchproxy.ts).
 *
 * An event that decodes but cannot be cached (no name, another kind; issue 20, item 4) is counted
 * in informer_malformed_events_total, logged without its content, and skipped; the same watch
 * goes on.
 *
 * A line that does not decode (issue 32, item 5): here the server's own ADDED event of an Echo,
 * cut short on its way. The watch ends (informer_watch_errors_total{reason="undecodable"}) and is
 * re-opened from the last event applied, so the server sends the ADDED again, and the operator
 * makes that Echo's Job, without a 410 or a re-list. Before, the line was skipped, the next
 * event moved the resourceVersion past it, and the Echo stayed out of the cache.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { watchProxy } from '../support/apiwatchproxy.js';
import { metricValue } from '../support/faults.js';
import { applyEcho, eventually, jobsOf, testNamespace } from '../support/kube.js';
import { installCrds, startOperator, waitReady, withOperatorOutput } from '../support/operator.js';

test(
  'malformed events in the Echos watch: the undecodable restart the watch, the uncacheable are skipped',
  { timeout: 180_000 },
  async (t) => {
    installCrds();
    const ns = testNamespace(t, 'malformed');
    const proxy = await watchProxy(t, { watches: /\/echos$/ });
    const op = await startOperator(t, { KUBECONFIG: proxy.kubeconfig, WATCH_NAMESPACES: ns, NAMESPACE: ns, LOG_LEVEL: 'info' });
    await waitReady(op);
    const informer = `echos/${ns}`;
    const metric = (name: string, reason?: string): Promise<number | undefined> =>
      metricValue(op, name, reason ? { informer, reason } : { informer });

    await withOperatorOutput(op, async () => {
      // Uncacheable: skipped, the same watch goes on.
      const secret = 'do-not-log-me';
      const uncacheable = [
        {
          type: 'MODIFIED',
          object: { apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', metadata: { namespace: ns, resourceVersion: '1' } },
        },
        {
          type: 'ADDED',
          object: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'intruder', namespace: ns, resourceVersion: '1' },
            data: { secret },
          },
        },
      ];
      await eventually(
        'the Echos watch to be open',
        () => proxy.inject(uncacheable.map((e) => JSON.stringify(e)).join('\n')) > 0,
        30_000,
        100,
      );
      const watchesBefore = await metric('informer_watches_total');
      await eventually(
        'both uncacheable events counted',
        async () =>
          (await metric('informer_malformed_events_total', 'no-name')) === 1 &&
          (await metric('informer_malformed_events_total', 'wrong-kind')) === 1,
        30_000,
      );
      applyEcho(ns, 'after-skipped', 'still here');
      await eventually('the Job of an Echo created after them', () => jobsOf(ns, 'after-skipped').length === 1, 60_000);
      assert.equal(await metric('informer_watches_total'), watchesBefore, 'the same watch went on');
      const skipped = op
        .output()
        .split('\n')
        .filter((l) => l.includes('skipping a malformed watch event'));
      assert.equal(skipped.length, 2, 'one warning per skipped event');
      assert.ok(!op.output().includes(secret), 'what the events carried is not logged');

      // Undecodable: the server's ADDED of Echo "mangled" arrives cut short, once.
      const cut = proxy.mangleOnce(
        (line) => line.includes('"type":"ADDED"') && line.includes('"name":"mangled"'),
        (line) => line.slice(0, Math.floor(line.length / 2)),
      );
      applyEcho(ns, 'mangled', 'cut on its way');
      await eventually('the ADDED of Echo mangled to be cut', () => cut.done(), 30_000, 100);
      // A later event, which moved the resourceVersion past the lost one before.
      applyEcho(ns, 'later', 'after the cut');
      await eventually('the Job of the Echo created after the cut', () => jobsOf(ns, 'later').length === 1, 60_000);
      await eventually('the Job of the Echo whose event was cut', () => jobsOf(ns, 'mangled').length === 1, 60_000);
      assert.equal(await metric('informer_malformed_events_total', 'unparseable'), 1, 'the cut line counted');
      assert.equal(await metric('informer_watch_errors_total', 'undecodable'), 1, 'it ended the watch');
      assert.ok((await metric('informer_watches_total'))! > watchesBefore!, 'and a new watch was opened');
      for (const reason of ['error', 'short', 'gone']) {
        assert.equal(await metric('informer_watch_errors_total', reason), 0, `no other watch error (${reason})`);
      }
      assert.equal(await metric('informer_relists_total'), 0, 'no re-list: the re-watch brought the event back');
      assert.equal(op.proc.exitCode, null, 'the operator runs on');
      assert.ok(!/informer failed/.test(op.output()));
    });
  },
);
