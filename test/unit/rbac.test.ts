/**
 * The install's RBAC rules as derived from controller declarations (infra/rbac.ts): what each
 * kind a declaration names grants, and the rules it declares besides.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { rulesFor } from '../../infra/rbac.js';
import { CONFIGMAPS, CRONJOBS, JOBS, SECRETS, type ResourceType } from '../../src/kube/resources.js';
import { controllerFor } from '../../src/runtime/controller/index.js';

const WIDGETS: ResourceType = { group: 'example.test', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
const GADGETS: ResourceType = { group: 'example.test', version: 'v1', resource: 'gadgets', kind: 'Gadget', namespaced: true };
const done = () => ({ reconcile: () => Promise.resolve(undefined) });

describe('rulesFor', () => {
  it('read the primary, patch its status, update its finalizers, read and write owned kinds as declared; same verbs share a rule', () => {
    const a = controllerFor(WIDGETS)
      .owns(JOBS, { writes: ['create', 'delete'] })
      .complete(done);
    const b = controllerFor(GADGETS)
      .owns(CRONJOBS, { writes: ['create', 'patch', 'delete'] })
      .complete(done);
    assert.deepEqual(rulesFor([a, b]), [
      { apiGroups: ['example.test'], resources: ['widgets', 'gadgets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['example.test'], resources: ['widgets/status', 'gadgets/status'], verbs: ['patch'] },
      { apiGroups: ['example.test'], resources: ['widgets/finalizers', 'gadgets/finalizers'], verbs: ['update'] },
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
      { apiGroups: ['batch'], resources: ['cronjobs'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
    ]);
  });

  it('watched kinds are read only; declared rules are added, merged by group and verbs unless they name resources', () => {
    const named = { apiGroups: [''], resources: ['secrets'], resourceNames: ['widget-key'], verbs: ['get' as const] };
    const a = controllerFor(WIDGETS)
      .watches(CONFIGMAPS, () => [])
      .withRules({ apiGroups: [''], resources: ['services'], verbs: ['get', 'list', 'watch'] }, named)
      .complete(done);
    assert.deepEqual(rulesFor([a]), [
      { apiGroups: ['example.test'], resources: ['widgets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['example.test'], resources: ['widgets/status'], verbs: ['patch'] },
      { apiGroups: ['example.test'], resources: ['widgets/finalizers'], verbs: ['update'] },
      { apiGroups: [''], resources: ['configmaps', 'services'], verbs: ['get', 'list', 'watch'] },
      named,
    ]);
  });

  it('a controller of a built-in kind: For(ConfigMap).Owns(Secret)', () => {
    const d = controllerFor(CONFIGMAPS)
      .owns(SECRETS, { writes: ['create'] })
      .complete(done);
    assert.deepEqual(rulesFor([d]), [
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['configmaps/status'], verbs: ['patch'] },
      { apiGroups: [''], resources: ['configmaps/finalizers'], verbs: ['update'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch', 'create'] },
    ]);
  });
});
