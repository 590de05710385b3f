/**
 * Argo CD's own code judges Echos whose runs ended on the real node (the kubelet runs the pods,
 * the job controller completes or fails the Job): read back from the cluster, a printed message
 * is Healthy, a run that failed for good (Stalled) is Degraded.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argoCdHealth } from '../support/argocd.js';
import { applyEcho, conditionOf as condition, eventually } from '../support/kube.js';
import { getEcho, okAndFailingNamespaces, phase, printed } from '../support/runs.js';
import { addOnsReady } from '../support/addons.js';

// Built in the background by npm test while other files run: wait for it here, outside any test's timeout.
await addOnsReady(import.meta.url);

test(
  'Argo CD health of real Echos whose runs ended: printed is Healthy with the Ready message; failed (Stalled) is Degraded with the failure',
  { timeout: 300_000 },
  async (t) => {
    const { ns, failing } = await okAndFailingNamespaces(t, 'node-argocd');
    applyEcho(ns, 'done', 'printed for Argo CD');
    applyEcho(failing, 'bad', 'will fail');

    const done = await phase(ns, 'done', 'Succeeded');
    assert.equal(printed(ns, done), 'printed for Argo CD\n');
    const healthy = await argoCdHealth(done);
    t.diagnostic(`Argo CD: echo done, printed: ${JSON.stringify(healthy)}`);
    assert.deepEqual(healthy, { status: 'Healthy', message: condition(done, 'Ready')!.message });

    // The job controller retries the failing pod backoffLimit times, with its own backoff.
    const bad = await eventually(
      'Echo bad Stalled after its run failed',
      () => condition(getEcho(failing, 'bad'), 'Stalled')?.status === 'True' && getEcho(failing, 'bad'),
      240_000,
      1000,
    );
    assert.equal(bad.status!.phase, 'Failed');
    const degraded = await argoCdHealth(bad);
    t.diagnostic(`Argo CD: echo bad, failed: ${JSON.stringify(degraded)}`);
    assert.deepEqual(degraded, { status: 'Degraded', message: condition(bad, 'Stalled')!.message });
  },
);
