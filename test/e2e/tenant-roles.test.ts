/**
 * The install's tenant roles on the real API server, RBAC enforced: once the cluster's
 * clusterrole-aggregation-controller has copied them into the built-in roles, a user bound to
 * `edit` in a namespace (a RoleBinding, nothing of the install's own) may write Echos and
 * ScheduledEchos there and read their status but not write it; a user bound to `view` may only
 * read them; `admin` gets what `edit` gets; and nobody gets deletecollection or anything in
 * another namespace.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CustomResourceKind } from '../../src/api/crd.js';
import { SCHEDULED_ECHOS } from '../../src/api/scheduledecho.js';
import { CUSTOM_RESOURCES } from '../../src/controllers/index.js';
import { installEchoperator } from '../support/install.js';
import { eventually, kubectl, kubectlOk, testNamespace } from '../support/kube.js';

const resourceOf = (kind: CustomResourceKind): string => `${kind.resource}.${kind.group}`;

/** `kubectl auth can-i <verb> <resource> --as <user> -n <ns>`: 'yes' or 'no'. */
function canI(user: string, ns: string, verb: string, resource: string, subresource?: string): string {
  const args = ['auth', 'can-i', verb, resource, `--as=${user}`, '-n', ns, ...(subresource ? [`--subresource=${subresource}`] : [])];
  return kubectl(args).stdout.trim();
}

/** What `user` may do with `kind` in `ns`, verb by verb: 'create=yes delete=no ...'. */
function verbsOf(user: string, ns: string, kind: CustomResourceKind, subresource?: string): string {
  const verbs = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
  return verbs.map((verb) => `${verb}=${canI(user, ns, verb, resourceOf(kind), subresource)}`).join(' ');
}

const EDITOR = 'create=yes delete=yes deletecollection=no get=yes list=yes patch=yes update=yes watch=yes';
const VIEWER = 'create=no delete=no deletecollection=no get=yes list=yes patch=no update=no watch=yes';
const NOTHING = 'create=no delete=no deletecollection=no get=no list=no patch=no update=no watch=no';

/** An object of `kind` in `ns`, as a user writes it. */
function manifestOf(kind: CustomResourceKind, ns: string, name: string): string {
  const spec = kind === SCHEDULED_ECHOS ? { message: name, schedule: '@hourly' } : { message: name };
  return JSON.stringify({ apiVersion: `${kind.group}/${kind.version}`, kind: kind.kind, metadata: { name, namespace: ns }, spec });
}

test('namespace editors and admins may write Echos and ScheduledEchos, viewers may read them, through the built-in roles', async (t) => {
  const install = installEchoperator(t, {}, { workload: false });
  assert.equal(install.echoperator.tenantRoleNames.length, 2 * CUSTOM_RESOURCES.length);
  const ns = testNamespace(t, 'tenants');
  const elsewhere = testNamespace(t, 'tenants-elsewhere');
  // Users of this test only (impersonated: the API server authorizes each request as that user).
  const user = (role: string) => `${role}-${ns}@example.test`;
  for (const role of ['admin', 'edit', 'view']) {
    kubectlOk(['create', 'rolebinding', `tenant-${role}`, `--clusterrole=${role}`, `--user=${user(role)}`, '-n', ns]);
  }

  for (const kind of CUSTOM_RESOURCES) {
    // The aggregation controller copies the roles' rules into edit and view asynchronously.
    await eventually(
      `the built-in edit and view roles to include ${resourceOf(kind)}`,
      () => canI(user('edit'), ns, 'create', resourceOf(kind)) === 'yes' && canI(user('view'), ns, 'list', resourceOf(kind)) === 'yes',
      30_000,
    );
    assert.equal(verbsOf(user('edit'), ns, kind), EDITOR, `edit on ${kind.kind}`);
    assert.equal(verbsOf(user('admin'), ns, kind), EDITOR, `admin on ${kind.kind}`);
    assert.equal(verbsOf(user('view'), ns, kind), VIEWER, `view on ${kind.kind}`);
    // The status is the operator's to write: every role reads it (edit and admin through view), none writes it.
    for (const role of ['admin', 'edit', 'view']) {
      assert.equal(verbsOf(user(role), ns, kind, 'status'), VIEWER, `${role} on ${kind.kind}/status`);
    }
    assert.equal(verbsOf(user('edit'), elsewhere, kind), NOTHING, `edit on ${kind.kind} in a namespace it is not bound in`);

    // Real requests, as each user.
    const name = `by-editor-${kind.singular}`;
    const created = kubectl(['create', '-f', '-', `--as=${user('edit')}`], { input: manifestOf(kind, ns, name) });
    assert.equal(created.code, 0, created.stderr);
    const read = kubectl(['get', resourceOf(kind), name, '-n', ns, `--as=${user('view')}`, '-o', 'jsonpath={.spec.message}']);
    assert.equal(read.stdout, name, read.stderr);
    const refused = kubectl(['create', '-f', '-', `--as=${user('view')}`], { input: manifestOf(kind, ns, `by-viewer-${kind.singular}`) });
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /forbidden/i);
    const deleted = kubectl(['delete', resourceOf(kind), name, '-n', ns, `--as=${user('admin')}`]);
    assert.equal(deleted.code, 0, deleted.stderr);
  }
});
