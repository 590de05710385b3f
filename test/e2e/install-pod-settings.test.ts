/**
 * The pod settings Helm users expect, on the real API server: the Deployment synthesized from a
 * values file with every one of them (nodeSelector, tolerations, affinity, priorityClassName,
 * imagePullSecrets, podAnnotations, podLabels, extraEnv) passes the server's own validation with
 * unknown fields refused (server-side dry run, fieldValidation Strict), and keeps each of them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Deployment, V1PodSpec } from '@kubernetes/client-node';
import { synthesize } from '../../infra/chart.js';
import { parseValues } from '../../infra/values.js';
import { kubectl, testNamespace } from '../support/kube.js';
import { manifestsOf } from '../support/manifests.js';

test('the API server accepts and keeps every pod setting of a values file', (t) => {
  const ns = testNamespace(t, 'pod-settings');
  const values = parseValues(`
namespace: ${ns}
createNamespace: false
crds: {enabled: false}
nodeSelector: {kubernetes.io/os: linux}
tolerations: [{key: dedicated, operator: Equal, value: operators, effect: NoSchedule}, {operator: Exists, effect: NoExecute, tolerationSeconds: 30}]
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}]}]
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - {weight: 50, podAffinityTerm: {topologyKey: kubernetes.io/hostname, labelSelector: {matchLabels: {app.kubernetes.io/name: echoperator}}}}
priorityClassName: system-cluster-critical
imagePullSecrets: [{name: registry-credentials}]
podAnnotations: {example.com/team: platform}
podLabels: {team: platform}
extraEnv:
  - {name: WORK_QUEUE_ORDER, value: fifo}
  - {name: MEMORY_MIB, valueFrom: {resourceFieldRef: {resource: limits.memory, divisor: 1Mi}}}
`);
  const deployment = manifestsOf<V1Deployment>(synthesize(values).objects, 'Deployment')[0]!;
  const r = kubectl(['apply', '--server-side', '--dry-run=server', '--field-manager=echoperator-tests', '-o', 'json', '-f', '-'], {
    input: JSON.stringify(deployment),
  });
  assert.equal(r.code, 0, r.stderr);
  const applied = JSON.parse(r.stdout) as V1Deployment;
  const spec = applied.spec!.template.spec!;
  const mine = deployment.spec!.template.spec!;
  const keys: (keyof V1PodSpec)[] = ['nodeSelector', 'tolerations', 'affinity', 'priorityClassName', 'imagePullSecrets'];
  for (const key of keys) {
    assert.deepEqual(spec[key], mine[key], key);
  }
  assert.equal(applied.spec!.template.metadata!.labels!.team, 'platform');
  assert.equal(applied.spec!.template.metadata!.annotations!['example.com/team'], 'platform');
  const env = Object.fromEntries(spec.containers[0]!.env!.map((e) => [e.name, e]));
  assert.deepEqual(env.WORK_QUEUE_ORDER, { name: 'WORK_QUEUE_ORDER', value: 'fifo' });
  assert.equal(env.MEMORY_MIB!.valueFrom!.resourceFieldRef!.divisor, '1Mi');
  assert.deepEqual(applied.spec!.selector, deployment.spec!.selector);
});
