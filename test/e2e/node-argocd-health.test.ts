/**
 * Argo CD's own code judges an Echo whose run completed on the real node (the kubelet runs the
 * pod, the job controller completes the Job): read back from the cluster, Healthy.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { argoCdHealth } from '../support/argocd.js';
import { applyEcho, testNamespace } from '../support/kube.js';
import { operatorFor, phase, printed } from '../support/runs.js';

test('Argo CD health of a real Echo whose message was printed: Healthy, with the Ready message', { timeout: 180_000 }, async (t) => {
  const ns = testNamespace(t, 'node-argocd-health', {}, { pods: true });
  await operatorFor(t, ns);
  applyEcho(ns, 'done', 'printed for Argo CD');
  const done = await phase(ns, 'done', 'Succeeded');
  assert.equal(printed(ns, done), 'printed for Argo CD\n');
  const ready = done.status.conditions.find((c: any) => c.type === 'Ready');
  assert.equal(ready.status, 'True');
  const health = await argoCdHealth(done);
  t.diagnostic(`Argo CD: echo done, printed: ${JSON.stringify(health)}`);
  assert.deepEqual(health, { status: 'Healthy', message: ready.message });
});
