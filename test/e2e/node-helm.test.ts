/**
 * The Helm chart's life cycle with real Helm (v4, from the Go module proxy) on a cluster of the
 * test's own with a real node, installed from the packaged chart (packageChart) as a user would:
 *  - `helm install --wait` returns once the operator's pod is Ready, and an Echo prints;
 *  - `helm upgrade --set ha.enabled=true` gives three Ready replicas, one of them the Lease's
 *    holder, and the PodDisruptionBudget;
 *  - `helm rollback` to the first revision gives one replica again and no budget;
 *  - `helm uninstall` leaves the CRDs and the Echos, and no object carrying the install's labels.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import { ensureHelm } from '../../scripts/ship/helm/tool.js';
import { packageChart } from '../../scripts/ship/helm/generate.js';
import { loadOperatorImage } from '../../scripts/testbed/operator-image.js';
import { startPrivateControlPlane, type Kubectl } from '../support/faults.js';
import { printedBy } from '../support/echo-printed.js';
import { eventually, itemsOf } from '../support/kube.js';
import { addOnsReady } from '../support/addons.js';

// Built in the background by npm test while other files run: wait for it here, outside any test's timeout.
await addOnsReady(import.meta.url);

const NS = 'echoperator';
const RELEASE = 'echoperator';
const INSTANCE = `app.kubernetes.io/instance=${RELEASE}`;

function readyOperatorPods(k: Kubectl): V1Pod[] {
  const pods = itemsOf<V1Pod>(k, ['get', 'pods', '-n', NS, '-l', INSTANCE]);
  return pods.filter((p) => !p.metadata!.deletionTimestamp && p.status!.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
}

/** Every listable kind's objects carrying the install's labels, in every namespace, as kind/name. */
function labelledObjects(k: Kubectl): string[] {
  const kinds = k
    .ok(['api-resources', '--verbs=list', '-o', 'name'])
    .split('\n')
    .filter((kind) => kind && kind !== 'events' && kind !== 'events.events.k8s.io');
  const out = k.ok(['get', kinds.join(','), '-A', '-l', `${INSTANCE},app.kubernetes.io/part-of=echoperator`, '-o', 'name']);
  return out.split('\n').filter(Boolean);
}

test('helm install, upgrade to HA, rollback and uninstall on a real node', { timeout: 900_000 }, async (t) => {
  const helmBinary = await ensureHelm((line) => t.diagnostic(line));
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-helm-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const chart = await packageChart(dir);
  const cp = await startPrivateControlPlane({ node: true });
  t.after(() => cp.stop());
  const k = cp.kubectl;
  await loadOperatorImage(cp.state);
  const helm = (args: string[]): string => {
    const r = spawnSync(helmBinary, [...args, '--kubeconfig', cp.state.kubeconfig], { encoding: 'utf8', timeout: 420_000 });
    assert.equal(r.status, 0, `helm ${args.join(' ')}: ${r.stderr}${r.stdout}`);
    return r.stdout;
  };

  // install --wait returns once the operator is Ready: no polling after it.
  const notes = helm(['install', RELEASE, chart, '-n', NS, '--create-namespace', '--wait', '--timeout', '5m']);
  assert.match(notes, /kubectl get echos/, 'NOTES.txt says what to do next');
  const installed = k.json<V1Deployment>(['get', 'deployment', RELEASE, '-n', NS]);
  assert.equal(installed.status?.readyReplicas, 1, 'Ready when helm install returns');
  assert.equal(readyOperatorPods(k).length, 1);

  k.ok(['create', 'namespace', 'team-a']);
  k.ok(['apply', '-f', '-'], {
    namespace: 'team-a',
    input: JSON.stringify({
      apiVersion: 'mmontes.io/v1alpha1',
      kind: 'Echo',
      metadata: { name: 'hello' },
      spec: { message: 'Hola from Helm' },
    }),
  });
  assert.equal(await printedBy(k, 'team-a', 'hello'), 'Hola from Helm\n');

  // upgrade to HA: three Ready replicas, one leader holding the Lease, and the budget.
  helm(['upgrade', RELEASE, chart, '-n', NS, '--set', 'ha.enabled=true', '--wait', '--timeout', '6m']);
  const replicas = await eventually('3 Ready replicas', () => readyOperatorPods(k).length === 3 && readyOperatorPods(k), 180_000);
  const names = replicas.map((p) => p.metadata!.name!);
  const holder = await eventually(
    'one replica holding the Lease',
    () => {
      const r = k.run(['get', 'lease', 'echoperator', '-n', NS, '-o', 'jsonpath={.spec.holderIdentity}']);
      const h = r.code === 0 ? r.stdout.trim() : '';
      return names.includes(h) && h;
    },
    60_000,
  );
  t.diagnostic(`leader after the upgrade: ${holder}`);
  assert.equal(k.json<{ spec: { maxUnavailable: number } }>(['get', 'pdb', RELEASE, '-n', NS]).spec.maxUnavailable, 1);

  // rollback to the first revision: one replica, no budget.
  helm(['rollback', RELEASE, '1', '-n', NS, '--wait', '--timeout', '5m']);
  await eventually(
    'one replica after the rollback',
    () => k.json<V1Deployment>(['get', 'deployment', RELEASE, '-n', NS]).spec?.replicas === 1 && readyOperatorPods(k).length === 1,
    180_000,
  );
  assert.notEqual(k.run(['get', 'pdb', RELEASE, '-n', NS]).code, 0, 'the budget is gone');

  // uninstall: the CRDs and the Echos stay, nothing else carrying the install's labels does.
  helm(['uninstall', RELEASE, '-n', NS, '--wait', '--timeout', '5m']);
  k.ok(['get', 'crd', 'echos.mmontes.io', 'scheduledechos.mmontes.io']);
  assert.equal(k.json<Echo>(['get', 'echo', 'hello'], { namespace: 'team-a' }).spec.message, 'Hola from Helm');
  const left = await eventually(
    'no object of the install left',
    () => {
      const objects = labelledObjects(k);
      return objects.length === 0 ? objects : false;
    },
    120_000,
  );
  assert.deepEqual(left, []);
});
