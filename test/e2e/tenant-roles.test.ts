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
function canI(user: string, ns: string, verb: string, resource: string): string {
  return kubectl(['auth', 'can-i', verb, resource, `--as=${user}`, '-n', ns]).stdout.trim();
}

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

interface Access {
  user: string;
  ns: string;
  kind: CustomResourceKind;
  subresource?: string;
}

/**
 * What each `user` may do with `kind` in `ns`, verb by verb ('create=yes delete=no ...'): the
 * question `kubectl auth can-i` asks (a SubjectAccessReview), asked for every verb of every entry
 * in one kubectl call, since one call per answer made the test take minutes.
 */
function verbsOf(accesses: Access[]): string[] {
  const items = accesses.flatMap((a) =>
    VERBS.map((verb) => ({
      apiVersion: 'authorization.k8s.io/v1',
      kind: 'SubjectAccessReview',
      spec: {
        user: a.user,
        resourceAttributes: { namespace: a.ns, verb, group: a.kind.group, resource: a.kind.resource, subresource: a.subresource },
      },
    })),
  );
  const r = kubectl(['create', '-f', '-', '-o', 'jsonpath={.status.allowed}{","}'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }),
  });
  assert.equal(r.code, 0, r.stderr);
  const allowed = r.stdout.split(',').slice(0, items.length);
  assert.equal(allowed.length, items.length, r.stdout);
  return accesses.map((_, i) => VERBS.map((verb, j) => `${verb}=${allowed[i * VERBS.length + j] === 'true' ? 'yes' : 'no'}`).join(' '));
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
    assert.equal(canI(user('view'), ns, 'create', resourceOf(kind)), 'no', `kubectl auth can-i create as view on ${kind.kind}`);
    // The status is the operator's to write: every role reads it (edit and admin through view), none writes it.
    const expected: [Access, string][] = [
      [{ user: user('edit'), ns, kind }, EDITOR],
      [{ user: user('admin'), ns, kind }, EDITOR],
      [{ user: user('view'), ns, kind }, VIEWER],
      ...['admin', 'edit', 'view'].map((role): [Access, string] => [{ user: user(role), ns, kind, subresource: 'status' }, VIEWER]),
      [{ user: user('edit'), ns: elsewhere, kind }, NOTHING],
    ];
    const answers = verbsOf(expected.map(([access]) => access));
    expected.forEach(([a, want], i) => {
      const where = `${a.user.split('-')[0]} on ${kind.kind}${a.subresource ? `/${a.subresource}` : ''}${a.ns === elsewhere ? ' in a namespace it is not bound in' : ''}`;
      assert.equal(answers[i], want, where);
    });

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
