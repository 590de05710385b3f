/**
 * The deployment surface, synthesized in-process: least-privilege RBAC (stated here rule by
 * rule), the HA toggle, namespaced installs, the settings ConfigMap and its checksum, the
 * hardened pod, prop validation, values.yaml / ECHOPERATOR_HA, and byte-identical output.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type {
  V1ClusterRole,
  V1ClusterRoleBinding,
  V1ConfigMap,
  V1Container,
  V1Deployment,
  V1NetworkPolicy,
  V1PodDisruptionBudget,
  V1Role,
  V1Service,
  V1ServiceAccount,
  V1ValidatingAdmissionPolicy,
  V1ValidatingAdmissionPolicyBinding,
} from '@kubernetes/client-node';
import { parse } from 'yaml';
import { buildCrd, crdName } from '../../src/api/index.js';
import { CONTROLLERS, CUSTOM_RESOURCES } from '../../src/controllers/index.js';
import { CONFIGMAPS, CRONJOBS, DEPLOYMENTS, JOBS, type ResourceType } from '../../src/kube/resources.js';
import { echoPodTemplate } from '../../src/controllers/common/pod.js';
import { SETTINGS, parseSettings } from '../../src/config/index.js';
import { controllerFor } from '../../src/runtime/controller/index.js';
import { synthesize, synthesizeFiles, type Manifest } from '../../infra/chart.js';
import { confinedKinds } from '../../infra/confinement.js';
import { ECHOPERATOR_VERSION, EchoperatorPropsError, type EchoperatorProps } from '../../infra/echoperator.js';
import { applyEnvOverrides, loadValues, parseValues, ValuesError } from '../../infra/values.js';
import { declaredGrants, grantsOf } from '../support/grants.js';
import { manifestsOf as find } from '../support/manifests.js';
import { runSynthInSharedProcess } from '../support/synth.js';

type Rule = { apiGroups?: string[]; resources?: string[]; verbs: string[]; resourceNames?: string[]; nonResourceURLs?: string[] };

/** The kinds the controllers own, each with the kind of its owner, as declared. */
const OWNED = CONTROLLERS.flatMap((d) => d.owned.map((o) => ({ type: o.type, owner: d.primary })));

const kindKey = (type: ResourceType): string => `${type.group}/${type.resource}`;
/** Where the owned kinds that run pods hold their pod template, as CEL from `object`; other kinds (a ConfigMap) run none. */
const POD_TEMPLATE: Record<string, string> = {
  [kindKey(JOBS)]: 'object.spec.template',
  [kindKey(CRONJOBS)]: 'object.spec.jobTemplate.spec.template',
};
/** The owned kinds the confinement policy must hold to the controllers' shape: those that run pods. */
const CONFINED = OWNED.filter((o) => POD_TEMPLATE[kindKey(o.type)] !== undefined);

/**
 * The operator's whole permission set in a watched namespace (or cluster-wide): exactly what its
 * controllers declare, verb by verb (test/support/grants.ts), one rule per group and verbs
 * (rulesFor's merging, tested in rbac.test.ts).
 */
function assertOperatorRules(rules: Rule[]): void {
  assert.deepEqual(grantsOf(rules), declaredGrants());
  const shapes = rules.map((r) => JSON.stringify([r.apiGroups, r.verbs, r.resourceNames]));
  assert.equal(new Set(shapes).size, shapes.length, `rules of one group and verbs are merged: ${shapes.join(' ')}`);
}

/** With HA only, in the operator's namespace only. */
const LEADER_ELECTION_RULES: Rule[] = [
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: ['echoperator'], verbs: ['get', 'update', 'list', 'watch'] },
];

const BASE_SETTINGS = [
  'HA_ENABLED',
  'HEALTH_PORT',
  'JOB_IMAGE',
  'LOG_FORMAT',
  'LOG_LEVEL',
  'METRICS_ENABLED',
  'METRICS_INSECURE_PLAIN_HTTP',
  'METRICS_PATH',
  'METRICS_PORT',
  'NUM_WORKERS',
  'WATCH_NAMESPACES',
];
const HA_SETTINGS = ['HA_LEASE_DURATION_SECONDS', 'HA_LEASE_LOCK_NAME', 'HA_RENEW_DEADLINE_SECONDS', 'HA_RETRY_PERIOD_SECONDS'];

function objects(props: EchoperatorProps = {}): Manifest[] {
  return synthesize(props).objects;
}

/** The metrics endpoint's RBAC, tested in its own section. */
const METRICS_RBAC = /-metrics-(auth|reader)$/;
/** The tenant roles (aggregated into admin, edit, view), tested in tenant-roles.test.ts. */
const TENANT_ROLES = /-(editor|viewer)$/;

/** The objects without the metrics endpoint's RBAC and the tenant roles: what the operator itself is granted. */
function operatorObjects(props: EchoperatorProps = {}): Manifest[] {
  return objects(props).filter((o) => !METRICS_RBAC.test(o.metadata.name) && !TENANT_ROLES.test(o.metadata.name));
}

/** The one object of `kind` (and `name`, `namespace`), as the type the caller names for that kind. */
function one<T = Manifest>(objs: Manifest[], kind: string, name?: string, namespace?: string): T {
  const found = find<T>(objs, kind, name, namespace);
  assert.equal(found.length, 1, `expected exactly one ${kind}${name ? ` ${name}` : ''}, found ${found.length}`);
  return found[0]!;
}

function roles(objs: Manifest[]): Manifest[] {
  return objs.filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole');
}

function deployment(objs: Manifest[]): V1Deployment {
  return one<V1Deployment>(objs, 'Deployment', 'echoperator', 'echoperator');
}

function container(objs: Manifest[]): V1Container {
  const containers = deployment(objs).spec!.template.spec!.containers;
  assert.equal(containers.length, 1);
  return containers[0]!;
}

function settings(objs: Manifest[]): Record<string, string> {
  return one<V1ConfigMap>(objs, 'ConfigMap', 'echoperator-config', 'echoperator').data!;
}

function checksum(objs: Manifest[]): string {
  return deployment(objs).spec!.template.metadata!.annotations!['echoperator.mmontes.io/config-checksum']!;
}

const variants: [string, EchoperatorProps][] = [
  ['HA off', {}],
  ['HA on', { ha: { enabled: true } }],
  ['watching two namespaces', { watchNamespaces: ['team-a', 'team-b'] }],
  ['watching two namespaces with HA', { watchNamespaces: ['team-a', 'team-b'], ha: { enabled: true } }],
];

describe('RBAC', () => {
  it('grants Jobs and CronJobs only the writes the Echo and ScheduledEcho controllers make: never update', () => {
    const granted = grantsOf(one<V1ClusterRole>(operatorObjects(), 'ClusterRole').rules!);
    const verbsOn = (type: ResourceType): string[] | undefined =>
      granted.find((g) => g.group === type.group && g.resource === type.resource)?.verbs;
    assert.deepEqual(verbsOn(JOBS), ['create', 'delete', 'get', 'list', 'watch']);
    assert.deepEqual(verbsOn(CRONJOBS), ['create', 'delete', 'get', 'list', 'patch', 'watch']);
  });

  for (const [what, props] of variants) {
    it(`uses no wildcard and grants nothing on Secrets (${what})`, () => {
      const rs = roles(operatorObjects(props));
      assert.ok(rs.length > 0);
      for (const role of rs) {
        for (const rule of role.rules as Rule[]) {
          for (const field of ['apiGroups', 'resources', 'verbs', 'resourceNames', 'nonResourceURLs'] as const) {
            for (const v of rule[field] ?? []) assert.ok(!v.includes('*'), `${role.kind}/${role.metadata.name}: wildcard in ${field}`);
          }
          assert.ok(
            !(rule.resources ?? []).some((r) => r === 'secrets' || r.startsWith('secrets/')),
            `${role.metadata.name} touches secrets`,
          );
          assert.ok(!(rule.resources ?? []).some((r) => r === 'pods' || r.startsWith('pods/')), `${role.metadata.name} touches pods`);
          assert.equal(rule.nonResourceURLs, undefined);
        }
      }
    });
  }

  it('HA off, all namespaces: exactly one ClusterRole with the operator rules, bound to the ServiceAccount; no Role', () => {
    const objs = operatorObjects();
    assert.deepEqual(
      roles(objs).map((r) => `${r.kind}/${r.metadata.name}`),
      ['ClusterRole/echoperator'],
    );
    assertOperatorRules(one<V1ClusterRole>(objs, 'ClusterRole').rules!);
    const binding = one(objs, 'ClusterRoleBinding');
    assert.equal(binding.metadata.name, 'echoperator');
    assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'echoperator' });
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'echoperator', namespace: 'echoperator' }]);
    assert.equal(find(objs, 'RoleBinding').length, 0);
    assert.equal(binding.metadata.namespace, undefined);
  });

  it('HA on: the same ClusterRole plus a Lease Role in the operator namespace, limited to the lease by name', () => {
    const objs = operatorObjects({ ha: { enabled: true } });
    assert.deepEqual(
      roles(objs).map((r) => `${r.kind}/${r.metadata.namespace ?? ''}/${r.metadata.name}`),
      ['ClusterRole//echoperator', 'Role/echoperator/echoperator-leader-election'],
    );
    assertOperatorRules(one<V1ClusterRole>(objs, 'ClusterRole').rules!);
    assert.deepEqual(one(objs, 'Role', 'echoperator-leader-election', 'echoperator').rules, LEADER_ELECTION_RULES);
    const rb = one(objs, 'RoleBinding', 'echoperator-leader-election', 'echoperator');
    assert.deepEqual(rb.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'echoperator-leader-election' });
    assert.deepEqual(rb.subjects, [{ kind: 'ServiceAccount', name: 'echoperator', namespace: 'echoperator' }]);
  });

  it('a custom lease name is the only lease the Role names', () => {
    const objs = operatorObjects({ ha: { enabled: true, leaseName: 'my-lock' } });
    const rules = one(objs, 'Role', 'echoperator-leader-election').rules as Rule[];
    assert.deepEqual(rules[1]!.resourceNames, ['my-lock']);
    assert.equal(settings(objs).HA_LEASE_LOCK_NAME, 'my-lock');
  });

  it('watchNamespaces: one Role + RoleBinding per watched namespace, no ClusterRole', () => {
    for (const ha of [false, true]) {
      const objs = operatorObjects({ watchNamespaces: ['team-a', 'team-b'], ha: { enabled: ha } });
      assert.equal(find(objs, 'ClusterRole').length, 0);
      assert.equal(find(objs, 'ClusterRoleBinding').length, 0);
      for (const ns of ['team-a', 'team-b']) {
        assertOperatorRules(one<V1Role>(objs, 'Role', 'echoperator', ns).rules!);
        const rb = one(objs, 'RoleBinding', 'echoperator', ns);
        assert.deepEqual(rb.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'echoperator' });
        assert.deepEqual(rb.subjects, [{ kind: 'ServiceAccount', name: 'echoperator', namespace: 'echoperator' }]);
      }
      const expectedRoles = ['team-a/echoperator', 'team-b/echoperator', ...(ha ? ['echoperator/echoperator-leader-election'] : [])];
      assert.deepEqual(
        roles(objs).map((r) => `${r.metadata.namespace}/${r.metadata.name}`),
        expectedRoles,
      );
      assert.equal(settings(objs).WATCH_NAMESPACES, 'team-a,team-b');
    }
  });

  it('the lease Role lives only in the operator namespace, also when that namespace is watched', () => {
    const objs = operatorObjects({ namespace: 'ops', watchNamespaces: ['ops', 'apps'], ha: { enabled: true } });
    assert.deepEqual(one(objs, 'Role', 'echoperator-leader-election').metadata.namespace, 'ops');
    assertOperatorRules(one<V1Role>(objs, 'Role', 'echoperator', 'ops').rules!);
  });

  it('cluster-scoped names include the namespace unless it is the default install, so installs never collide', () => {
    assert.equal(one(operatorObjects(), 'ClusterRole').metadata.name, 'echoperator');
    const other = operatorObjects({ namespace: 'ops' });
    assert.equal(one(other, 'ClusterRole').metadata.name, 'echoperator-ops');
    assert.equal(one<V1ClusterRoleBinding>(other, 'ClusterRoleBinding').roleRef.name, 'echoperator-ops');
    assert.deepEqual(one(other, 'ClusterRoleBinding').subjects, [{ kind: 'ServiceAccount', name: 'echoperator', namespace: 'ops' }]);
  });
});

describe('the confinement policy (confineServiceAccount)', () => {
  const policy = (objs: Manifest[]) => one<V1ValidatingAdmissionPolicy>(objs, 'ValidatingAdmissionPolicy');
  const expressions = (objs: Manifest[]) =>
    policy(objs)
      .spec!.validations!.map((v) => v.expression)
      .join('\n');

  it('is on by default: a v1 policy and a Deny binding, for Job and CronJob CREATE, UPDATE and DELETE, failing closed', () => {
    const objs = objects();
    const p = policy(objs);
    assert.equal(p.apiVersion, 'admissionregistration.k8s.io/v1');
    assert.equal(p.metadata!.name, 'echoperator-confinement');
    assert.equal(p.spec!.failurePolicy, 'Fail');
    const groups = [...new Set(CONFINED.map((o) => o.type.group))];
    assert.deepEqual(
      p.spec!.matchConstraints!.resourceRules,
      groups.map((group) => ({
        apiGroups: [group],
        apiVersions: ['*'],
        operations: ['CREATE', 'UPDATE', 'DELETE'],
        resources: CONFINED.filter((o) => o.type.group === group).map((o) => o.type.resource),
      })),
    );
    const binding = one<V1ValidatingAdmissionPolicyBinding>(objs, 'ValidatingAdmissionPolicyBinding');
    assert.deepEqual(binding.spec, { policyName: 'echoperator-confinement', validationActions: ['Deny'] });
    assert.equal(binding.metadata!.name, 'echoperator-confinement');
    for (const v of p.spec!.validations!) {
      assert.equal(v.reason, 'Forbidden');
      assert.ok(v.message!.length > 0);
    }
  });

  it("binds only the install's ServiceAccount, by user name; named per install so two never collide", () => {
    assert.deepEqual(policy(objects()).spec!.matchConditions, [
      { name: 'operator-service-account', expression: 'request.userInfo.username == "system:serviceaccount:echoperator:echoperator"' },
    ]);
    const other = objects({ namespace: 'ops', name: 'echo' });
    assert.equal(policy(other).metadata!.name, 'echo-ops-confinement');
    assert.match(policy(other).spec!.matchConditions![0]!.expression, /"system:serviceaccount:ops:echo"$/);
  });

  it("allows the jobImage and the operator's own command only, as the controllers build them", () => {
    const pod = echoPodTemplate('any message', 'registry.example.com/tools/busybox:1.36', {}).spec!;
    const [printf, format] = pod.containers[0]!.command!;
    const exprs = expressions(objects({ jobImage: 'registry.example.com/tools/busybox:1.36' }));
    assert.match(exprs, /c\.image == "registry\.example\.com\/tools\/busybox:1\.36"/);
    assert.ok(exprs.includes(`c.command[0] == ${JSON.stringify(printf)} && c.command[1] == ${JSON.stringify(format)}`), exprs);
    assert.equal(pod.automountServiceAccountToken, false);
    assert.equal(pod.volumes, undefined);
    for (const field of [
      'volumes',
      'hostNetwork',
      'hostPID',
      'hostIPC',
      'automountServiceAccountToken',
      'serviceAccountName',
      'lifecycle',
    ]) {
      assert.ok(exprs.includes(field), `no rule on ${field}`);
    }
  });

  it('requires the owner each controller declares: Jobs an Echo, CronJobs a ScheduledEcho', () => {
    const variables = Object.fromEntries(policy(objects()).spec!.variables!.map((v) => [v.name, v.expression]));
    const byResource = (value: (o: (typeof CONFINED)[number]) => string): string =>
      `{${CONFINED.map((o) => `"${o.type.resource}": "${value(o)}"`).join(', ')}}[request.resource.resource]`;
    assert.equal(
      variables.ownerKind,
      byResource((o) => o.owner.kind),
    );
    assert.equal(
      variables.ownerGroup,
      byResource((o) => o.owner.group),
    );
    // Today: (request.resource.resource == "jobs" ? object.spec.template : object.spec.jobTemplate.spec.template).spec
    const template = (o: (typeof CONFINED)[number]): string => POD_TEMPLATE[kindKey(o.type)]!;
    const choices = CONFINED.slice(0, -1).map((o) => `request.resource.resource == "${o.type.resource}" ? ${template(o)} : `);
    assert.equal(variables.pod, `(${choices.join('')}${template(CONFINED.at(-1)!)}).spec`);
  });

  it('confines the owned kinds that run pods, leaves out those that run none, and refuses an owned kind it does not know', () => {
    const widgets: ResourceType = { group: 'example.test', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
    const done = () => ({ reconcile: () => Promise.resolve(undefined) });
    const owning = (type: ResourceType) => controllerFor(widgets).owns(type, { writes: ['create'] });
    const jobsAndConfigMaps = owning(JOBS)
      .owns(CONFIGMAPS, { writes: ['create'] })
      .complete(done);
    assert.deepEqual(
      confinedKinds([jobsAndConfigMaps]).map((k) => [k.type.kind, k.owner.kind, k.template]),
      [['Job', 'Widget', 'object.spec.template']],
    );
    assert.throws(() => confinedKinds([owning(DEPLOYMENTS).complete(done)]), /no pod template path for Deployment/);
  });

  it('is left out with confineServiceAccount: false, which values.yaml accepts', () => {
    const objs = objects({ confineServiceAccount: false });
    assert.equal(find(objs, 'ValidatingAdmissionPolicy').length, 0);
    assert.equal(find(objs, 'ValidatingAdmissionPolicyBinding').length, 0);
    assert.deepEqual(parseValues('confineServiceAccount: false\n'), { confineServiceAccount: false });
    assert.throws(() => parseValues('confineServiceAccount: "no"\n'), /confineServiceAccount must be true or false/);
    assert.equal(loadValues(undefined, {}).confineServiceAccount ?? true, true);
  });
});

describe('HA toggle', () => {
  const off = objects();
  const on = objects({ ha: { enabled: true } });

  it('replicas 1 with Recreate (never two operators without a lease); ha.replicas with a surge-one rolling update', () => {
    assert.equal(deployment(off).spec!.replicas, 1);
    assert.deepEqual(deployment(off).spec!.strategy, { type: 'Recreate' });
    assert.equal(deployment(on).spec!.replicas, 3);
    assert.deepEqual(deployment(on).spec!.strategy, { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } });
    assert.equal(deployment(objects({ ha: { enabled: true, replicas: 5 } })).spec!.replicas, 5);
    assert.equal(deployment(objects({ ha: { enabled: false, replicas: 5 } })).spec!.replicas, 1);
  });

  it('ConfigMap keys are exactly the operator env vars, plus the HA_* ones with HA', () => {
    assert.deepEqual(Object.keys(settings(off)).sort(), BASE_SETTINGS);
    assert.deepEqual(Object.keys(settings(on)).sort(), [...BASE_SETTINGS, ...HA_SETTINGS].sort());
    assert.deepEqual(settings(off), {
      NUM_WORKERS: '4',
      WATCH_NAMESPACES: '',
      LOG_LEVEL: 'info',
      LOG_FORMAT: 'json',
      METRICS_ENABLED: 'true',
      METRICS_PATH: '/metrics',
      METRICS_PORT: '2112',
      METRICS_INSECURE_PLAIN_HTTP: 'false',
      HEALTH_PORT: '8081',
      JOB_IMAGE: 'busybox:1.37',
      HA_ENABLED: 'false',
    });
    assert.deepEqual(Object.fromEntries(Object.entries(settings(on)).filter(([k]) => k.startsWith('HA_'))), {
      HA_ENABLED: 'true',
      HA_LEASE_LOCK_NAME: 'echoperator',
      HA_LEASE_DURATION_SECONDS: '15',
      HA_RENEW_DEADLINE_SECONDS: '10',
      HA_RETRY_PERIOD_SECONDS: '2',
    });
  });

  it('a PodDisruptionBudget (maxUnavailable 1) and spread across nodes only with HA', () => {
    assert.equal(find(off, 'PodDisruptionBudget').length, 0);
    assert.equal(deployment(off).spec!.template.spec!.topologySpreadConstraints, undefined);
    const pdb = one<V1PodDisruptionBudget>(on, 'PodDisruptionBudget', 'echoperator', 'echoperator');
    assert.deepEqual(pdb.spec, {
      maxUnavailable: 1,
      selector: { matchLabels: deployment(on).spec!.selector.matchLabels },
      unhealthyPodEvictionPolicy: 'AlwaysAllow',
    });
    const [tsc, ...rest] = deployment(on).spec!.template.spec!.topologySpreadConstraints!;
    assert.equal(rest.length, 0);
    assert.equal(tsc!.topologyKey, 'kubernetes.io/hostname');
    assert.equal(tsc!.whenUnsatisfiable, 'ScheduleAnyway');
    assert.equal(tsc!.maxSkew, 1);
    assert.deepEqual(tsc!.labelSelector!.matchLabels, deployment(on).spec!.selector.matchLabels);
  });

  it('everything else is the same: the difference is RBAC, settings, replicas, strategy, spread, PDB', () => {
    const names = (objs: Manifest[]) => objs.map((o) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`);
    assert.deepEqual(
      names(on).filter((n) => !names(off).includes(n)),
      [
        'Role/echoperator/echoperator-leader-election',
        'RoleBinding/echoperator/echoperator-leader-election',
        'PodDisruptionBudget/echoperator/echoperator',
      ],
    );
    assert.deepEqual(
      names(off).filter((n) => !names(on).includes(n)),
      [],
    );
    assert.deepEqual(container(on), container(off));
  });
});

describe("the ConfigMap against the operator's own settings parser (src/config)", () => {
  /** The container's environment: the ConfigMap plus what the downward API fills in. */
  function podEnv(objs: Manifest[]): Record<string, string> {
    return {
      ...settings(objs),
      POD_NAME: 'echoperator-abc-xyz',
      POD_NAMESPACE: 'echoperator',
      NAMESPACE: 'echoperator',
      HA_NODE_ID: 'echoperator-abc-xyz',
    };
  }
  const noMachine = { hostname: () => 'host', randomHex: () => '00', inClusterNamespace: () => undefined };

  it('every ConfigMap key and container env var is a setting the operator reads', () => {
    const known = new Set(Object.values(SETTINGS).map((spec) => spec.env));
    const objs = objects({ ha: { enabled: true } });
    for (const key of [...Object.keys(settings(objs)), ...container(objs).env!.map((e) => e.name)]) {
      if (key === 'POD_NAME' || key === 'POD_NAMESPACE') continue; // for logs and computed defaults
      assert.ok(known.has(key), `${key} is not read by the operator`);
    }
  });

  it('the operator parses the synthesized settings back into the props, HA off and on', () => {
    const off = parseSettings([], podEnv(objects({ watchNamespaces: ['a', 'b'], workers: 7, logLevel: 'debug' })), noMachine);
    assert.deepEqual(
      [
        off.namespace,
        off.watchNamespaces,
        off.numWorkers,
        off.logLevel,
        off.logFormat,
        off.haEnabled,
        off.metricsEnabled,
        off.metricsPath,
        off.metricsPort,
        off.healthPort,
        off.jobImage,
      ],
      ['echoperator', ['a', 'b'], 7, 'debug', 'json', false, true, '/metrics', 2112, 8081, 'busybox:1.37'],
    );
    const on = parseSettings(
      [],
      podEnv(
        objects({ ha: { enabled: true, leaseName: 'lock', leaseDurationSeconds: 20, renewDeadlineSeconds: 12, retryPeriodSeconds: 3 } }),
      ),
      noMachine,
    );
    assert.deepEqual(
      [
        on.haEnabled,
        on.haNodeId,
        on.haLeaseLockName,
        on.haLeaseDurationSeconds,
        on.haRenewDeadlineSeconds,
        on.haRetryPeriodSeconds,
        on.watchNamespaces,
      ],
      [true, 'echoperator-abc-xyz', 'lock', 20, 12, 3, []],
    );
    // The kubelet must not SIGKILL the operator before its own shutdown timeout has run out.
    assert.ok(off.shutdownTimeoutSeconds < deployment(objects()).spec!.template.spec!.terminationGracePeriodSeconds!);
  });
});

describe('settings checksum', () => {
  it('is stable for the same settings and changes when any setting changes', () => {
    const base = checksum(objects());
    assert.match(base, /^[0-9a-f]{64}$/);
    assert.equal(checksum(objects()), base);
    const changed: EchoperatorProps[] = [
      { workers: 5 },
      { logLevel: 'debug' },
      { jobImage: 'busybox:1.36' },
      { watchNamespaces: ['a'] },
      { metrics: { path: '/m' } },
      { ha: { enabled: true } },
      { ha: { enabled: true, retryPeriodSeconds: 3 } },
    ];
    const sums = changed.map((p) => checksum(objects(p)));
    assert.equal(new Set([base, ...sums]).size, changed.length + 1, 'every settings change must change the checksum');
  });

  it('ignores props that are not settings (the pod template changes through them anyway)', () => {
    assert.equal(checksum(objects({ image: 'example.com/echoperator:dev' })), checksum(objects()));
    // Lease timings only reach the settings when HA is on.
    assert.equal(checksum(objects({ ha: { retryPeriodSeconds: 3 } })), checksum(objects()));
  });
});

describe('the operator pod', () => {
  const objs = objects();
  const pod = deployment(objs).spec!.template.spec!;
  const c = container(objs);

  it('runs as its ServiceAccount with the token mounted (cdk8s-plus turns it off by default)', () => {
    const sa = one<V1ServiceAccount>(objs, 'ServiceAccount', 'echoperator', 'echoperator');
    assert.equal(sa.automountServiceAccountToken, true);
    assert.equal(pod.serviceAccountName, 'echoperator');
    assert.equal(pod.automountServiceAccountToken, true);
  });

  it('has the restricted security context', () => {
    assert.deepEqual(pod.securityContext, {
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    assert.deepEqual(c.securityContext, {
      allowPrivilegeEscalation: false,
      capabilities: { drop: ['ALL'] },
      readOnlyRootFilesystem: true,
      runAsGroup: 65532,
      runAsNonRoot: true,
      runAsUser: 65532,
      seccompProfile: { type: 'RuntimeDefault' },
    });
  });

  it('takes settings from the ConfigMap and its identity from the downward API', () => {
    assert.deepEqual(c.envFrom, [{ configMapRef: { name: 'echoperator-config' } }]);
    const env = Object.fromEntries(c.env!.map((e) => [e.name, e.valueFrom!.fieldRef!.fieldPath]));
    assert.deepEqual(env, {
      POD_NAME: 'metadata.name',
      POD_NAMESPACE: 'metadata.namespace',
      NAMESPACE: 'metadata.namespace',
      HA_NODE_ID: 'metadata.name',
    });
  });

  it('probes /healthz and /readyz on the health port, and names the metrics port', () => {
    assert.deepEqual(c.livenessProbe!.httpGet, { path: '/healthz', port: 'health' });
    assert.deepEqual(c.readinessProbe!.httpGet, { path: '/readyz', port: 'health' });
    assert.deepEqual(c.ports, [
      { name: 'metrics', containerPort: 2112, protocol: 'TCP' },
      { name: 'health', containerPort: 8081, protocol: 'TCP' },
    ]);
  });

  it('has explicit resources, IfNotPresent, the default image and command, and a grace period above the 30 s shutdown', () => {
    assert.deepEqual(c.resources, { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '512Mi' } });
    assert.equal(c.imagePullPolicy, 'IfNotPresent');
    assert.equal(c.image, `ghcr.io/mmontes11/echoperator-ts:${ECHOPERATOR_VERSION}`);
    assert.deepEqual(c.command, ['node', '/app/start.js']);
    assert.equal(c.args, undefined, 'no subcommand: the bundle runs the operator');
    assert.ok(pod.terminationGracePeriodSeconds! > 30);
  });

  it('has a metrics Service with a port named https (http when insecure), or none when metrics are off', () => {
    const svc = one<V1Service>(objs, 'Service', 'echoperator-metrics', 'echoperator');
    assert.deepEqual(svc.spec!.ports, [{ name: 'https', port: 2112, protocol: 'TCP', targetPort: 'metrics' }]);
    const plain = one<V1Service>(objects({ metrics: { insecurePlainHttp: true } }), 'Service', 'echoperator-metrics');
    assert.deepEqual(plain.spec!.ports, [{ name: 'http', port: 2112, protocol: 'TCP', targetPort: 'metrics' }]);
    assert.deepEqual(svc.spec!.selector, deployment(objs).spec!.selector.matchLabels);
    const off = objects({ metrics: { enabled: false } });
    assert.equal(find(off, 'Service').length, 0);
    assert.equal(settings(off).METRICS_ENABLED, 'false');
    assert.deepEqual(container(off).ports, [{ name: 'health', containerPort: 8081, protocol: 'TCP' }]);
  });

  it('accepts an image by digest, and custom resources, command and args', () => {
    const digest = `ghcr.io/mmontes11/echoperator-ts@sha256:${'a'.repeat(64)}`;
    const custom = container(objects({ image: digest, resources: { limits: { cpu: '1' } }, command: ['/echoperator'], args: [] }));
    assert.equal(custom.image, digest);
    assert.deepEqual(custom.resources, { requests: { cpu: '50m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } });
    assert.deepEqual(custom.command, ['/echoperator']);
    assert.equal(custom.args, undefined);
    assert.equal(container(objects({ image: `${digest.replace('@', ':v1@')}` })).image, digest.replace('@', ':v1@'));
  });
});

describe('objects', () => {
  it('are, in apply order: Namespace, CRDs, ServiceAccount, RBAC, metrics RBAC, tenant roles, confinement policy, ConfigMap, Deployment, Service', () => {
    assert.deepEqual(
      objects().map((o) => `${o.kind}/${o.metadata.name}`),
      [
        'Namespace/echoperator',
        ...CUSTOM_RESOURCES.map((k) => `CustomResourceDefinition/${crdName(k)}`),
        'ServiceAccount/echoperator',
        'ClusterRole/echoperator',
        'ClusterRoleBinding/echoperator',
        'ClusterRole/echoperator-metrics-auth',
        'ClusterRoleBinding/echoperator-metrics-auth',
        'ClusterRole/echoperator-metrics-reader',
        ...CUSTOM_RESOURCES.flatMap((k) => [
          `ClusterRole/echoperator-${k.singular}-editor`,
          `ClusterRole/echoperator-${k.singular}-viewer`,
        ]),
        'ValidatingAdmissionPolicy/echoperator-confinement',
        'ValidatingAdmissionPolicyBinding/echoperator-confinement',
        'ConfigMap/echoperator-config',
        'Deployment/echoperator',
        'Service/echoperator-metrics',
      ],
    );
  });

  it("include the CRDs as src/api builds them, kept by Helm's annotation, unless told not to", () => {
    const kept = CUSTOM_RESOURCES.map(buildCrd).map((crd) => ({
      ...crd,
      metadata: { ...crd.metadata, annotations: { 'helm.sh/resource-policy': 'keep' } },
    }));
    assert.deepEqual(find(objects(), 'CustomResourceDefinition'), kept);
    assert.deepEqual(find(objects({ crds: { keep: false } }), 'CustomResourceDefinition'), CUSTOM_RESOURCES.map(buildCrd));
    assert.equal(find(objects({ crds: { enabled: false } }), 'CustomResourceDefinition').length, 0);
  });

  it('include a restricted Namespace unless told not to; every namespaced object is in the operator namespace', () => {
    const ns = one(objects(), 'Namespace', 'echoperator');
    assert.equal(ns.metadata.labels!['pod-security.kubernetes.io/enforce'], 'restricted');
    const objs = objects({ namespace: 'ops', createNamespace: false, ha: { enabled: true } });
    assert.equal(find(objs, 'Namespace').length, 0);
    const cluster = new Set([
      'Namespace',
      'CustomResourceDefinition',
      'ClusterRole',
      'ClusterRoleBinding',
      'ValidatingAdmissionPolicy',
      'ValidatingAdmissionPolicyBinding',
    ]);
    for (const o of objs) assert.equal(o.metadata.namespace, cluster.has(o.kind) ? undefined : 'ops', `${o.kind}/${o.metadata.name}`);
  });

  it('synthesize to the same bytes twice', () => {
    for (const [, props] of variants) assert.equal(synthesize(props).yaml, synthesize(props).yaml);
    const yaml = synthesize().yaml;
    // No generated timestamp as a value (the ScheduledEcho CRD's CEL time zone rule holds a fixed date).
    assert.doesNotMatch(yaml, /cdk8s\.io\/metadata|creationTimestamp:|:\s+['"]?\d{4}-\d\d-\d\dT\d/);
    assert.deepEqual((parse(yaml.split('\n---\n')[0]!) as Manifest).kind, 'Namespace');
  });
});

describe('prop validation', () => {
  const cases: [string, EchoperatorProps, RegExp][] = [
    [
      'renew >= duration',
      { ha: { leaseDurationSeconds: 10, renewDeadlineSeconds: 10 } },
      /ha\.leaseDurationSeconds \(10\) must be greater than ha\.renewDeadlineSeconds \(10\)/,
    ],
    [
      'renew <= 1.2 x retry',
      { ha: { renewDeadlineSeconds: 6, retryPeriodSeconds: 5 } },
      /ha\.renewDeadlineSeconds \(6\) must be greater than 1\.2 x ha\.retryPeriodSeconds/,
    ],
    ['non-integer retry', { ha: { retryPeriodSeconds: 1.5 } }, /ha\.retryPeriodSeconds must be a positive integer/],
    ['zero replicas', { ha: { enabled: true, replicas: 0 } }, /ha\.replicas must be a positive integer/],
    ['bad lease name', { ha: { leaseName: 'My_Lock' } }, /ha\.leaseName must be a DNS subdomain/],
    ['zero workers', { workers: 0 }, /workers must be a positive integer/],
    ['bad image', { image: 'Not An Image' }, /image must be an image reference/],
    ['short digest', { image: 'ghcr.io/x/y@sha256:abc' }, /image must be an image reference/],
    ['port clash', { healthPort: 2112 }, /metrics\.port and healthPort must differ/],
    ['port range', { metrics: { port: 70000 } }, /metrics\.port must be an integer from 1 to 65535/],
    ['relative metrics path', { metrics: { path: 'metrics' } }, /metrics\.path must be an absolute URL path/],
    ['RBAC wildcard metrics path', { metrics: { path: '/*' } }, /metrics\.path must be an absolute URL path .*'\*' is the RBAC wildcard/],
    ['RBAC wildcard at the end of the metrics path', { metrics: { path: '/metrics*' } }, /metrics\.path must be an absolute URL path/],
    ['bad log level', { logLevel: 'verbose' as never }, /logLevel must be one of debug, info, warn, error/],
    ['empty watch list', { watchNamespaces: [] }, /watchNamespaces must list at least one namespace/],
    ['duplicate watch', { watchNamespaces: ['a', 'a'] }, /watchNamespaces lists a twice/],
    ['bad watched namespace', { watchNamespaces: ['Team_A'] }, /every entry of watchNamespaces must be a DNS label/],
    ['bad namespace', { namespace: 'Echo' }, /namespace must be a DNS label/],
    [
      'short grace period',
      { terminationGracePeriodSeconds: 30 },
      /terminationGracePeriodSeconds must be an integer greater than the operator's 30 s shutdown timeout/,
    ],
    [
      'request above limit',
      { resources: { requests: { memory: '1Gi' } } },
      /resources\.requests\.memory \(1Gi\) must not exceed resources\.limits\.memory \(512Mi\)/,
    ],
    ['bad quantity', { resources: { requests: { cpu: 'lots' } } }, /resources\.requests\.cpu must be a Kubernetes quantity/],
    ['empty command', { command: [] }, /command must not be empty/],
  ];
  for (const [what, props, message] of cases) {
    it(`rejects ${what} with a message naming the prop`, () => {
      assert.throws(
        () => synthesize(props),
        (err: unknown) => {
          assert.ok(err instanceof EchoperatorPropsError, String(err));
          assert.match(err.message, message);
          return true;
        },
      );
    });
  }

  it('accepts the client-go boundaries just inside the rules', () => {
    synthesize({ ha: { enabled: true, leaseDurationSeconds: 11, renewDeadlineSeconds: 10, retryPeriodSeconds: 8 } });
    synthesize({ terminationGracePeriodSeconds: 31, resources: { requests: { memory: '256Mi' } } });
  });
});

describe('the metrics endpoint', () => {
  it('lets the ServiceAccount create TokenReviews and SubjectAccessReviews, and offers a metrics-reader ClusterRole for scrapers', () => {
    const objs = objects();
    assert.deepEqual(one(objs, 'ClusterRole', 'echoperator-metrics-auth').rules, [
      { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
      { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ]);
    const binding = one(objs, 'ClusterRoleBinding', 'echoperator-metrics-auth');
    assert.deepEqual(binding.roleRef, { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'echoperator-metrics-auth' });
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'echoperator', namespace: 'echoperator' }]);
    assert.deepEqual(one(objs, 'ClusterRole', 'echoperator-metrics-reader').rules, [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }]);
    assert.equal(find(objs, 'ClusterRoleBinding', 'echoperator-metrics-reader').length, 0, 'binding scrapers is the user’s choice');
    assert.equal(synthesize().echoperator.metricsReaderRoleName, 'echoperator-metrics-reader');
  });

  it('names them per install, follows metrics.path, and also makes them for a namespaced install', () => {
    const objs = objects({ namespace: 'ops', watchNamespaces: ['a'], metrics: { path: '/custom' } });
    assert.deepEqual(one(objs, 'ClusterRole', 'echoperator-ops-metrics-reader').rules, [{ nonResourceURLs: ['/custom'], verbs: ['get'] }]);
    assert.equal(one<V1ClusterRoleBinding>(objs, 'ClusterRoleBinding', 'echoperator-ops-metrics-auth').subjects![0]!.namespace, 'ops');
  });

  it('grants no reviews and offers no reader role when metrics are off or served over plain HTTP', () => {
    for (const metrics of [{ enabled: false }, { insecurePlainHttp: true }]) {
      const objs = objects({ metrics });
      assert.equal(objs.filter((o) => METRICS_RBAC.test(o.metadata.name)).length, 0, JSON.stringify(metrics));
    }
    assert.equal(settings(objects({ metrics: { insecurePlainHttp: true } })).METRICS_INSECURE_PLAIN_HTTP, 'true');
  });

  it('mounts metrics.certSecret read-only (not via subPath, so rotations show) and points METRICS_CERT_DIR at it', () => {
    const objs = objects({ metrics: { certSecret: 'metrics-tls' } });
    assert.equal(settings(objs).METRICS_CERT_DIR, '/etc/echoperator/metrics-cert');
    assert.deepEqual(
      container(objs).volumeMounts!.find((m) => m.name === 'metrics-cert'),
      { name: 'metrics-cert', mountPath: '/etc/echoperator/metrics-cert', readOnly: true },
    );
    assert.deepEqual(
      deployment(objs).spec!.template.spec!.volumes!.find((v) => v.name === 'metrics-cert'),
      { name: 'metrics-cert', secret: { secretName: 'metrics-tls' } },
    );
    assert.equal(settings(objects()).METRICS_CERT_DIR, undefined);
    assert.equal(container(objects()).volumeMounts!.length, 1);
  });

  it('adds a NetworkPolicy only when asked: the metrics port from labelled namespaces, the health port from no pod, ingress only', () => {
    assert.equal(find(objects(), 'NetworkPolicy').length, 0);
    const objs = objects({ metrics: { networkPolicy: { enabled: true } } });
    const np = one<V1NetworkPolicy>(objs, 'NetworkPolicy', 'echoperator-allow-metrics-traffic', 'echoperator');
    assert.deepEqual(np.spec, {
      podSelector: { matchLabels: deployment(objs).spec!.selector.matchLabels },
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ namespaceSelector: { matchLabels: { metrics: 'enabled' } } }], ports: [{ port: 2112, protocol: 'TCP' }] }],
    });
    const custom = one<V1NetworkPolicy>(
      objects({
        metrics: { port: 9443, networkPolicy: { enabled: true, namespaceLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } },
      }),
      'NetworkPolicy',
    );
    assert.deepEqual(custom.spec!.ingress![0], {
      from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
      ports: [{ port: 9443, protocol: 'TCP' }],
    });
  });

  it('refuses contradictory or malformed metrics props, naming them', () => {
    const cases: [EchoperatorProps, RegExp][] = [
      [
        { metrics: { certSecret: 'tls', insecurePlainHttp: true } },
        /metrics\.certSecret and metrics\.insecurePlainHttp exclude each other/,
      ],
      [{ metrics: { certSecret: 'Not_A_Name' } }, /metrics\.certSecret must be a Secret name/],
      [{ metrics: { networkPolicy: { enabled: true, namespaceLabels: {} } } }, /namespaceLabels must hold at least one label/],
      [
        { metrics: { networkPolicy: { enabled: true, namespaceLabels: { 'bad key!': 'x' } } } },
        /namespaceLabels must be valid label keys and values/,
      ],
    ];
    for (const [props, message] of cases) {
      assert.throws(
        () => synthesize(props),
        (e: unknown) => e instanceof EchoperatorPropsError && message.test(e.message),
        message.source,
      );
    }
  });

  it('reads the metrics props from values.yaml', () => {
    assert.deepEqual(
      parseValues('metrics: {certSecret: tls, insecurePlainHttp: false, networkPolicy: {enabled: true, namespaceLabels: {team: obs}}}\n'),
      { metrics: { certSecret: 'tls', insecurePlainHttp: false, networkPolicy: { enabled: true, namespaceLabels: { team: 'obs' } } } },
    );
    assert.throws(
      () => parseValues('metrics: {networkPolicy: {namespaceLabels: {a: 1}}}\n'),
      /metrics\.networkPolicy\.namespaceLabels\.a must be a string, got 1/,
    );
    assert.throws(() => parseValues('metrics: {certSecret: [a]}\n'), /metrics\.certSecret must be a string/);
  });
});

describe('values.yaml and ECHOPERATOR_HA', () => {
  it('the committed values.yaml has HA off, and ECHOPERATOR_HA overrides it both ways', () => {
    assert.equal(loadValues(undefined, {}).ha?.enabled, false);
    assert.equal(loadValues(undefined, { ECHOPERATOR_HA: 'true' }).ha?.enabled, true);
    assert.equal(loadValues(undefined, { ECHOPERATOR_HA: '' }).ha?.enabled, false);
    assert.equal(applyEnvOverrides({ ha: { enabled: true, replicas: 5 } }, { ECHOPERATOR_HA: 'false' }).ha?.enabled, false);
    assert.equal(applyEnvOverrides({ ha: { enabled: true, replicas: 5 } }, { ECHOPERATOR_HA: 'false' }).ha?.replicas, 5);
    assert.throws(() => applyEnvOverrides({}, { ECHOPERATOR_HA: 'yes' }), /ECHOPERATOR_HA must be true or false, got "yes"/);
  });

  it('parses every prop and rejects unknown keys and wrong types by name', () => {
    const props = parseValues(
      'namespace: ops\nnumWorkers: 8\nwatchNamespaces: [a, b]\nimage:\nmetrics: {port: 9090}\nha: {enabled: true, replicaCount: 2}\n',
    );
    assert.deepEqual(props, {
      namespace: 'ops',
      workers: 8,
      watchNamespaces: ['a', 'b'],
      metrics: { port: 9090 },
      ha: { enabled: true, replicas: 2 },
    });
    assert.throws(
      () => parseValues('ha: {enabeld: true}\n'),
      (e: unknown) => e instanceof ValuesError && /unknown key ha\.enabeld/.test(e.message),
    );
    assert.throws(() => parseValues('numWorkers: "4"\n'), /numWorkers must be an integer, got "4"/);
    assert.throws(() => parseValues('ha: {enabled: "yes"}\n'), /ha\.enabled must be true or false/);
    assert.deepEqual(parseValues(''), {});
  });
});

describe('the app', () => {
  /** The output folder's files (name -> text) after one run of the app. */
  function runApp(outdir: string): Record<string, string> {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'infra/main.ts'], {
      encoding: 'utf8',
      env: { ...process.env, CDK8S_OUTDIR: outdir, ECHOPERATOR_HA: '' },
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    return Object.fromEntries(readdirSync(outdir).map((f) => [f, readFileSync(join(outdir, f), 'utf8')]));
  }

  it(
    'writes the CRDs and the install as two byte-identical files per run, equal to the in-process synthesis; ECHOPERATOR_HA flips it',
    { timeout: 120_000 },
    async (t) => {
      const dir = mkdtempSync(join(tmpdir(), 'echoperator-synth-'));
      t.after(() => rmSync(dir, { recursive: true, force: true }));
      const out = join(dir, 'manifests');
      const first = runApp(out);
      assert.deepEqual(Object.keys(first).sort(), ['echoperator-crds.k8s.yaml', 'echoperator.k8s.yaml'], 'two files, nothing else');
      // The next runs in another process, one that has already synthesized (a state kept across runs would show).
      const again = (env: Record<string, string> = {}) => runSynthInSharedProcess(t, [], {}, env).then((r) => r.files);
      await again(); // warms the shared process: its second run is the one compared
      assert.deepEqual(await again(), first);
      assert.deepEqual(first, synthesizeFiles(loadValues(undefined, {})));
      // The two files together are the whole install, CRDs first: what `kubectl apply -f` of the folder applies.
      const docs = (text: string): string[] => text.split('\n---\n').map((d) => d.trim());
      assert.deepEqual(
        [...docs(first['echoperator-crds.k8s.yaml']!), ...docs(first['echoperator.k8s.yaml']!)].sort(),
        docs(synthesize(loadValues(undefined, {})).yaml).sort(),
      );
      assert.ok((parse(first['echoperator-crds.k8s.yaml']!.split('\n---\n')[0]!) as Manifest).kind === 'CustomResourceDefinition');
      assert.doesNotMatch(first['echoperator.k8s.yaml']!, /kind: CustomResourceDefinition/);
      const ha = await again({ ECHOPERATOR_HA: 'true' });
      assert.deepEqual(ha, synthesizeFiles({ ...loadValues(undefined, {}), ha: { enabled: true } }));
      assert.equal(ha['echoperator-crds.k8s.yaml'], first['echoperator-crds.k8s.yaml'], 'HA leaves the CRDs alone');
      assert.notEqual(ha['echoperator.k8s.yaml'], first['echoperator.k8s.yaml']);
    },
  );

  it('leaves the CRDs file out with crds.enabled false; crds.keep false leaves out the annotation', () => {
    assert.deepEqual(Object.keys(synthesizeFiles({ crds: { enabled: false } })), ['echoperator.k8s.yaml']);
    assert.match(synthesizeFiles({})['echoperator-crds.k8s.yaml']!, /helm\.sh\/resource-policy: keep/);
    assert.doesNotMatch(synthesizeFiles({ crds: { keep: false } })['echoperator-crds.k8s.yaml']!, /resource-policy/);
  });

  it('cdk8s.yaml points the cdk8s CLI at the same app and output folder; npm run synth runs it', () => {
    const cfg = parse(readFileSync('cdk8s.yaml', 'utf8')) as { language: string; output: string; app: string };
    assert.equal(cfg.language, 'typescript');
    assert.equal(cfg.output, 'dist/manifests');
    assert.match(cfg.app, /tsx infra\/main\.ts$/);
    const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { scripts: Record<string, string> };
    assert.equal(pkg.scripts.synth, 'scripts/testbed/main-node.sh tsx infra/main.ts');
  });
});
