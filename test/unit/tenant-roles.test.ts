/**
 * The tenant roles (infra/tenant-roles.ts) as synthesized: an editor and a viewer ClusterRole per
 * custom resource, aggregated into the built-in admin/edit and view roles, named per install, and
 * left out with tenantRoles: false. test/e2e/tenant-roles.test.ts checks them on the real RBAC.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ClusterRole } from '@kubernetes/client-node';
import { Chart, Testing } from 'cdk8s';
import { synthesize, type Manifest } from '../../infra/chart.js';
import type { EchoperatorProps } from '../../infra/echoperator.js';
import { addTenantRoles, aggregateTo } from '../../infra/tenant-roles.js';
import { parseValues } from '../../infra/values.js';
import { defineCustomResource } from '../../src/api/crd.js';
import { CUSTOM_RESOURCES } from '../../src/controllers/index.js';

const AGGREGATION = /^rbac\.authorization\.k8s\.io\/aggregate-to-/;

function tenantRoles(props: EchoperatorProps = {}): V1ClusterRole[] {
  return synthesize(props).objects.filter((o: Manifest) => o.kind === 'ClusterRole' && /-(editor|viewer)$/.test(o.metadata.name));
}

/** A role's aggregation labels, by built-in role. */
function aggregatesInto(role: V1ClusterRole): string[] {
  return Object.keys(role.metadata!.labels ?? {})
    .filter((l) => AGGREGATION.test(l))
    .map((l) => l.replace(AGGREGATION, ''))
    .sort();
}

describe('tenant roles', () => {
  it('an editor and a viewer per custom resource, in the order of CUSTOM_RESOURCES, named after the install', () => {
    assert.deepEqual(
      tenantRoles().map((r) => r.metadata!.name),
      CUSTOM_RESOURCES.flatMap((k) => [`echoperator-${k.singular}-editor`, `echoperator-${k.singular}-viewer`]),
    );
    assert.deepEqual(
      synthesize().echoperator.tenantRoleNames,
      tenantRoles().map((r) => r.metadata!.name),
    );
    assert.ok(CUSTOM_RESOURCES.length >= 2, 'Echo and ScheduledEcho at least');
  });

  it("editor: kubebuilder's verbs on the kind (no deletecollection), get on its status; aggregated into admin and edit", () => {
    for (const kind of CUSTOM_RESOURCES) {
      const editor = tenantRoles().find((r) => r.metadata!.name === `echoperator-${kind.singular}-editor`)!;
      assert.deepEqual(editor.rules, [
        { apiGroups: [kind.group], resources: [kind.resource], verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
        { apiGroups: [kind.group], resources: [`${kind.resource}/status`], verbs: ['get'] },
      ]);
      assert.deepEqual(aggregatesInto(editor), ['admin', 'edit']);
      assert.equal(editor.metadata!.labels![aggregateTo('admin')], 'true');
    }
  });

  it('viewer: get, list, watch on the kind and its status; aggregated into view (which edit and admin include)', () => {
    for (const kind of CUSTOM_RESOURCES) {
      const viewer = tenantRoles().find((r) => r.metadata!.name === `echoperator-${kind.singular}-viewer`)!;
      assert.deepEqual(viewer.rules, [
        { apiGroups: [kind.group], resources: [kind.resource, `${kind.resource}/status`], verbs: ['get', 'list', 'watch'] },
      ]);
      assert.deepEqual(aggregatesInto(viewer), ['view']);
      assert.equal(viewer.metadata!.labels![aggregateTo('view')], 'true');
    }
  });

  it("carry the install's labels, are never bound by the install, and grant no wildcard", () => {
    const objs = synthesize({ labels: { team: 'platform' } }).objects;
    const names = new Set(tenantRoles().map((r) => r.metadata!.name));
    for (const role of tenantRoles({ labels: { team: 'platform' } })) {
      assert.equal(role.metadata!.labels!.team, 'platform');
      assert.equal(role.metadata!.labels!['app.kubernetes.io/instance'], 'echoperator');
      for (const rule of role.rules!) for (const v of [...rule.apiGroups!, ...rule.resources!, ...rule.verbs]) assert.ok(!v.includes('*'));
    }
    const bound = objs.filter((o) => o.kind.endsWith('Binding')).map((o) => (o as { roleRef?: { name: string } }).roleRef?.name);
    assert.ok(!bound.some((n) => n !== undefined && names.has(n)), `bound: ${bound.join(', ')}`);
  });

  it('are named per install, like the ClusterRole, so two installs never collide; also for a namespaced install', () => {
    const names = tenantRoles({ namespace: 'ops', watchNamespaces: ['a'] }).map((r) => r.metadata!.name);
    assert.deepEqual(
      names,
      CUSTOM_RESOURCES.flatMap((k) => [`echoperator-ops-${k.singular}-editor`, `echoperator-ops-${k.singular}-viewer`]),
    );
  });

  it('are left out with tenantRoles: false, which values.yaml accepts (on by default)', () => {
    assert.deepEqual(tenantRoles({ tenantRoles: false }), []);
    assert.deepEqual(synthesize({ tenantRoles: false }).echoperator.tenantRoleNames, []);
    assert.equal(parseValues('tenantRoles: false\n').tenantRoles, false);
    assert.equal(parseValues('tenantRoles:\n').tenantRoles, undefined);
    assert.throws(() => parseValues('tenantRoles: maybe\n'), /tenantRoles must be true or false/);
  });

  it('follow the kinds they are given: a new custom resource gets its two roles with no other change', () => {
    const widgets = defineCustomResource({
      kind: 'Widget',
      resource: 'widgets',
      singular: 'widget',
      shortNames: [],
      schema: { type: 'object' },
      printerColumns: [],
    });
    const chart = new Chart(Testing.app(), 'test');
    assert.deepEqual(addTenantRoles(chart, { namePrefix: 'x', labels: {}, kinds: [widgets] }), ['x-widget-editor', 'x-widget-viewer']);
    const rules = (Testing.synth(chart) as V1ClusterRole[]).map((r) => r.rules![0]!.resources);
    assert.deepEqual(rules, [['widgets'], ['widgets', 'widgets/status']]);
  });
});
