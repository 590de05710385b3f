/**
 * The synthesized install on the real API server: server-side apply converges (a second look
 * with `kubectl diff --server-side` finds nothing), the ServiceAccount gets exactly the intended
 * permissions where intended and nowhere else (as the real RBAC authorizer reports them), the
 * real ReplicaSet controller's Pods pass the `restricted` Pod Security admission, and the CRDs'
 * validation rejects bad resources with messages naming the field.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { CoreV1Event, V1Deployment, V1Namespace, V1PodDisruptionBudget, V1Pod } from '@kubernetes/client-node';
import {
  applyManifests,
  applySynthesizedCrds,
  diffManifests,
  installEchoperator,
  writeManifests,
  type Install,
} from '../support/install.js';
import { eventually, kubectl, kubectlJson, kubectlOk, listItems, testNamespace } from '../support/kube.js';
import { declaredGrants } from '../support/grants.js';
import { manifestsOf } from '../support/manifests.js';

/**
 * What `kubectl auth can-i --list` shows for the operator rules: resource|resourceNames|verbs,
 * e.g. 'jobs.batch||create delete get list watch', 'echos.mmontes.io/status||patch', 'events||create patch'.
 */
const OPERATOR_CAN_I = declaredGrants().map((g) => {
  const [resource, subresource] = g.resource.split('/');
  return `${resource}${g.group ? `.${g.group}` : ''}${subresource ? `/${subresource}` : ''}|${g.resourceNames.join(' ')}|${g.verbs.join(' ')}`;
});
/**
 * Cluster-wide, for the metrics endpoint's reviews of its callers (TokenReview and
 * SubjectAccessReview are cluster-scoped): the only ClusterRole a namespaced install has.
 */
const METRICS_AUTH_CAN_I = ['subjectaccessreviews.authorization.k8s.io||create', 'tokenreviews.authentication.k8s.io||create'];
/** With HA, in the operator's namespace: create any Lease, everything else on the named one only. */
const LEASE_CAN_I = ['leases.coordination.k8s.io|echoperator|get list update watch', 'leases.coordination.k8s.io||create'];

/** One line of `kubectl auth can-i --list` as resource|resourceNames|sorted verbs ('' resource for URLs). */
function canIList(user: string, namespace: string): string[] {
  const out = kubectlOk(['auth', 'can-i', '--list', `--as=${user}`, '-n', namespace]);
  const rows = out
    .split('\n')
    .slice(1)
    .filter((l) => l.trim() !== '');
  return rows.map((line) => {
    const m = /^(\S*)\s+\[(.*?)\]\s+\[(.*?)\]\s+\[(.*?)\]\s*$/.exec(line);
    assert.ok(m, `unexpected can-i line: ${line}`);
    const [, resource, urls, names, verbs] = m;
    return `${resource || urls}|${names}|${verbs!.split(' ').sort().join(' ')}`;
  });
}

/** What `user` may do in `namespace` beyond what every authenticated ServiceAccount may do. */
function grantedRules(install: Install, baselineUser: string, namespace: string): string[] {
  const baseline = new Set(canIList(baselineUser, namespace));
  return [...new Set(canIList(install.user, namespace).filter((r) => !baseline.has(r)))].sort();
}

/** A ServiceAccount with no bindings of its own: the baseline every account has. */
function baselineUser(install: Install): string {
  kubectlOk(['create', 'serviceaccount', 'nobody'], { namespace: install.namespace });
  return `system:serviceaccount:${install.namespace}:nobody`;
}

async function expectGranted(install: Install, baseline: string, namespace: string, expected: string[]): Promise<void> {
  const want = [...expected].sort();
  // The authorizer sees new RBAC objects through its informers: allow it a moment.
  let last: string[] = [];
  await eventually(
    `${install.user} to have exactly the expected rules in ${namespace}`,
    () => {
      last = grantedRules(install, baseline, namespace);
      return JSON.stringify(last) === JSON.stringify(want);
    },
    15_000,
  ).catch((err) => {
    assert.deepEqual(last, want, String(err));
  });
}

function canI(install: Install, args: string[]): string {
  return kubectl(['auth', 'can-i', ...args, `--as=${install.user}`]).stdout.trim();
}

function assertNoSecrets(install: Install, namespaces: string[]): void {
  for (const ns of namespaces) {
    for (const verb of ['get', 'list', 'watch']) assert.equal(canI(install, [verb, 'secrets', '-n', ns]), 'no', `${verb} secrets in ${ns}`);
  }
  assert.equal(canI(install, ['get', 'secrets', '--all-namespaces']), 'no');
  assert.equal(canI(install, ['create', 'pods', '-n', namespaces[0]!]), 'no');
}

function assertNoDiff(install: Install): void {
  const diff = diffManifests(install.manifestFile);
  assert.equal(diff.code, 0, `kubectl diff --server-side found differences after apply:\n${diff.stdout}${diff.stderr}`);
  assert.equal(diff.stdout.trim(), '');
}

test('the default install (all namespaces, HA off) converges and grants exactly the operator rules, everywhere, and no Secrets', async (t) => {
  const install = installEchoperator(t);
  assertNoDiff(install);
  const elsewhere = testNamespace(t, 'anyns');
  const baseline = baselineUser(install);
  await expectGranted(install, baseline, elsewhere, [...OPERATOR_CAN_I, ...METRICS_AUTH_CAN_I]);
  // No Lease access without HA, not even at home.
  await expectGranted(install, baseline, install.namespace, [...OPERATOR_CAN_I, ...METRICS_AUTH_CAN_I]);
  assertNoSecrets(install, [elsewhere, install.namespace]);

  // The helper's kubeconfig really is the ServiceAccount (token only).
  const asOperator = (args: string[]) => kubectl(['--kubeconfig', install.kubeconfig, ...args]);
  const whoami = asOperator(['auth', 'whoami', '-o', 'jsonpath={.status.userInfo.username}']);
  assert.equal(whoami.stdout, install.user, whoami.stderr);
  assert.equal(asOperator(['get', 'echos', '--all-namespaces', '-o', 'name']).code, 0);
  const secrets = asOperator(['get', 'secrets', '-n', elsewhere]);
  assert.notEqual(secrets.code, 0);
  assert.match(secrets.stderr, /forbidden/i);
});

test('HA with watchNamespaces: Roles only in the watched namespaces, Lease rights only at home and only on the lease', async (t) => {
  const watched = [testNamespace(t, 'watched-a'), testNamespace(t, 'watched-b')];
  const unwatched = testNamespace(t, 'unwatched');
  const install = installEchoperator(t, { watchNamespaces: watched, ha: { enabled: true } }, { workload: false });
  assertNoDiff(install);
  assert.deepEqual(
    install.objects.filter((o) => o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding').map((o) => `${o.kind}/${o.metadata.name}`),
    [
      `ClusterRole/echoperator-${install.namespace}-metrics-auth`,
      `ClusterRoleBinding/echoperator-${install.namespace}-metrics-auth`,
      `ClusterRole/echoperator-${install.namespace}-metrics-reader`,
      ...install.echoperator.tenantRoleNames.map((name) => `ClusterRole/${name}`),
    ],
    'only the metrics reviews (cluster-scoped kinds), the role for scrapers and the tenant roles (bound by nobody) are cluster-wide',
  );
  const baseline = baselineUser(install);
  for (const ns of watched) await expectGranted(install, baseline, ns, [...OPERATOR_CAN_I, ...METRICS_AUTH_CAN_I]);
  await expectGranted(install, baseline, unwatched, METRICS_AUTH_CAN_I);
  await expectGranted(install, baseline, install.namespace, [...LEASE_CAN_I, ...METRICS_AUTH_CAN_I]);
  assertNoSecrets(install, [...watched, unwatched, install.namespace]);

  // Through the ServiceAccount's own token: the named lease can be created and renewed, no other.
  const asOperator = (args: string[], input?: string) =>
    kubectl(['--kubeconfig', install.kubeconfig, '-n', install.namespace, ...args], { input });
  const lease = (name: string) =>
    JSON.stringify({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name },
      spec: { holderIdentity: 'test', leaseDurationSeconds: 15 },
    });
  const created = asOperator(['create', '-f', '-'], lease('echoperator'));
  assert.equal(created.code, 0, created.stderr);
  assert.equal(asOperator(['get', 'lease', 'echoperator', '-o', 'name']).code, 0);
  const renewed = asOperator(['replace', '-f', '-'], lease('echoperator'));
  assert.equal(renewed.code, 0, renewed.stderr);
  // create cannot be limited by name, but nothing else about another lease is allowed.
  assert.equal(asOperator(['create', '-f', '-'], lease('other')).code, 0);
  const other = asOperator(['get', 'lease', 'other']);
  assert.notEqual(other.code, 0);
  assert.match(other.stderr, /forbidden/i);
  const elsewhere = kubectl(['--kubeconfig', install.kubeconfig, '-n', watched[0]!, 'create', '-f', '-'], { input: lease('echoperator') });
  assert.notEqual(elsewhere.code, 0);
  assert.match(elsewhere.stderr, /forbidden/i);
});

/** Events with reason FailedCreate about ReplicaSets in the namespace. */
function failedCreates(ns: string): string[] {
  const events = listItems<CoreV1Event>(['get', 'events', '--field-selector', 'reason=FailedCreate,involvedObject.kind=ReplicaSet'], {
    namespace: ns,
  });
  return events.map((e) => `${e.involvedObject.name}: ${e.message}`);
}

async function podsOf(ns: string, selector: Record<string, string>, count: number): Promise<V1Pod[]> {
  const sel = Object.entries(selector)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  return eventually(
    `${count} pods matching ${sel} in ${ns}`,
    () => {
      const pods = listItems<V1Pod>(['get', 'pods', '-l', sel], { namespace: ns });
      return pods.length === count ? pods : undefined;
    },
    60_000,
  );
}

test(
  "the ReplicaSet controller creates the HA Deployment's Pods in a restricted namespace; a weakened copy is refused",
  { timeout: 120_000 },
  async (t: TestContext) => {
    const install = installEchoperator(t, { ha: { enabled: true } });
    assertNoDiff(install);
    const ns = install.namespace;
    assert.equal(kubectlJson<V1Namespace>(['get', 'namespace', ns]).metadata!.labels!['pod-security.kubernetes.io/enforce'], 'restricted');
    const deployment = manifestsOf<V1Deployment>(install.objects, 'Deployment')[0]!;
    const pods = await podsOf(ns, deployment.spec!.selector.matchLabels!, 3);
    for (const pod of pods) {
      assert.equal(pod.spec!.serviceAccountName, install.serviceAccount);
      assert.equal(pod.spec!.securityContext!.runAsNonRoot, true);
      assert.equal(pod.spec!.containers[0]!.securityContext!.readOnlyRootFilesystem, true);
      assert.equal(pod.metadata!.annotations!['echoperator.mmontes.io/config-checksum'], install.echoperator.settingsChecksum);
    }
    assert.deepEqual(failedCreates(ns), []);
    const pdb = kubectlJson<V1PodDisruptionBudget>(['get', 'pdb', install.echoperator.config.name], { namespace: ns });
    assert.equal(pdb.spec!.maxUnavailable, 1);

    // The HA toggle converges both ways under server-side apply (strategy Recreate <-> RollingUpdate).
    for (const enabled of [false, true]) {
      const file = writeManifests(t, { namespace: ns, ha: { enabled } });
      applyManifests(file);
      const diff = diffManifests(file);
      assert.equal(diff.code, 0, `HA ${enabled}: ${diff.stdout}${diff.stderr}`);
      const spec = kubectlJson<V1Deployment>(['get', 'deployment', deployment.metadata!.name!], { namespace: ns }).spec!;
      assert.equal(spec.replicas, enabled ? 3 : 1);
      assert.equal(spec.strategy!.type, enabled ? 'RollingUpdate' : 'Recreate');
    }

    // Control: the same pod without its capability drop violates the profile, and the same check sees it.
    const weakened = structuredClone(deployment);
    const selector = { ...deployment.spec!.selector.matchLabels, 'app.kubernetes.io/instance': 'weakened' };
    weakened.metadata = { name: 'weakened', namespace: ns };
    weakened.spec!.replicas = 1;
    weakened.spec!.selector.matchLabels = selector;
    weakened.spec!.template.metadata!.labels = selector;
    delete weakened.spec!.template.spec!.topologySpreadConstraints;
    delete weakened.spec!.template.spec!.containers[0]!.securityContext!.capabilities;
    kubectlOk(['apply', '-f', '-'], { input: JSON.stringify(weakened) });
    const refused = await eventually(
      'a FailedCreate event for the weakened ReplicaSet',
      () => {
        const failed = failedCreates(ns);
        return failed.length > 0 ? failed : undefined;
      },
      60_000,
    );
    assert.match(refused.join('\n'), /violates PodSecurity "restricted/);
    assert.ok(
      refused.every((e) => e.startsWith('weakened-')),
      refused.join('\n'),
    );
  },
);

test('the CRDs reject bad resources with messages naming the field, and accept good ones', (t) => {
  applySynthesizedCrds(t);
  const ns = testNamespace(t, 'crd-validation');
  const create = (kind: 'Echo' | 'ScheduledEcho', name: string, spec: unknown) =>
    kubectl(['create', '-f', '-'], {
      namespace: ns,
      input: JSON.stringify({ apiVersion: 'mmontes.io/v1alpha1', kind, metadata: { name }, spec }),
    });

  const rejected: [string, 'Echo' | 'ScheduledEcho', unknown, RegExp][] = [
    ['missing message', 'Echo', {}, /spec\.message: Required value/],
    [
      'message of the wrong type',
      'Echo',
      { message: 42 },
      /spec\.message: Invalid value: "integer": spec\.message in body must be of type string/,
    ],
    ['oversize message', 'Echo', { message: 'x'.repeat(4097) }, /spec\.message: Too long: may not be (more|longer) than 4096/],
    ['empty message', 'Echo', { message: '' }, /spec\.message: Invalid value: "": spec\.message in body should be at least 1 chars long/],
    ['scheduled: missing message', 'ScheduledEcho', { schedule: '*/1 * * * *' }, /spec\.message: Required value/],
    [
      'scheduled: message of the wrong type',
      'ScheduledEcho',
      { message: ['hi'], schedule: '*/1 * * * *' },
      /spec\.message: Invalid value: "array": spec\.message in body must be of type string/,
    ],
    [
      'scheduled: oversize message',
      'ScheduledEcho',
      { message: 'x'.repeat(4097), schedule: '@hourly' },
      /spec\.message: Too long: may not be (more|longer) than 4096/,
    ],
    ['missing schedule', 'ScheduledEcho', { message: 'hi' }, /spec\.schedule: Required value/],
    [
      'invalid schedule',
      'ScheduledEcho',
      { message: 'hi', schedule: 'every minute' },
      /spec\.schedule: Invalid value: "[^"]*": must be a cron schedule of five fields/,
    ],
    [
      'four-field schedule',
      'ScheduledEcho',
      { message: 'hi', schedule: '* * * *' },
      /spec\.schedule: Invalid value: "[^"]*": must be a cron schedule/,
    ],
    [
      'schedule of the wrong type',
      'ScheduledEcho',
      { message: 'hi', schedule: 5 },
      /spec\.schedule: Invalid value: "integer": spec\.schedule in body must be of type string/,
    ],
  ];
  for (const [what, kind, spec, message] of rejected) {
    const r = create(kind, 'bad', spec);
    assert.notEqual(r.code, 0, `${what}: accepted`);
    assert.match(r.stderr, message, `${what}: ${r.stderr}`);
  }
  assert.equal(kubectl(['get', 'echo,scheduledecho', '-o', 'name'], { namespace: ns }).stdout.trim(), '');

  // At the limits: 4096 characters (multi-byte ones count once), both schedule forms.
  const accepted: ['Echo' | 'ScheduledEcho', string, unknown][] = [
    ['Echo', 'hola', { message: 'Hola, 世界!' }],
    ['Echo', 'longest', { message: 'é'.repeat(4096) }],
    ['ScheduledEcho', 'every-minute', { message: 'Hola, 世界!', schedule: '*/1 * * * *' }],
    ['ScheduledEcho', 'hourly', { message: 'hi', schedule: '@hourly' }],
  ];
  for (const [kind, name, spec] of accepted) {
    const r = create(kind, name, spec);
    assert.equal(r.code, 0, `${kind} ${name}: ${r.stderr}`);
  }
});
