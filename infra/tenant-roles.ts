/**
 * The tenant roles: for each custom resource of ours (src/api, through CUSTOM_RESOURCES), an
 * editor and a viewer ClusterRole, as kubebuilder scaffolds for every API (`<kind>-editor-role`,
 * `<kind>-viewer-role`), labelled to aggregate into Kubernetes' built-in user-facing roles, so
 * whoever may edit or view a namespace may edit or view its Echos and ScheduledEchos there, with
 * no binding of the install's own:
 *  - editor, into `admin` and `edit`: create, delete, get, list, patch, update, watch on the
 *    kind, and get on its status (the status is the operator's to write; `edit` never grants a
 *    /status write for the built-in kinds either);
 *  - viewer, into `view`: get, list, watch on the kind and its status. The built-in `view` is
 *    itself aggregated into `edit`, and `edit` into `admin`, so all three can read.
 * No deletecollection, not even for `admin` (whose built-in rules have it for built-in kinds):
 * kubectl never sends it (`kubectl delete echos --all` deletes one by one, which `delete` allows),
 * and a deleted namespace is emptied by the namespace controller with its own rights; a single
 * request deleting every Echo of a namespace is a power nobody needs. A cluster that wants it adds
 * a ClusterRole of its own labelled `rbac.authorization.k8s.io/aggregate-to-admin: "true"`.
 *
 * ClusterRoles without a binding grant nothing by themselves: the cluster's
 * clusterrole-aggregation-controller (part of kube-controller-manager) copies their rules into the
 * built-in roles, whose bindings decide who gets them, per namespace for RoleBindings. They can
 * also be bound on their own, to grant Echos without the rest of `edit`. Named after the install
 * (`<ClusterRole name>-<singular>-editor`), so two installs in a cluster never collide (their
 * roles then grant the same rules twice, which changes nothing).
 */
import * as k8s from './imports/k8s.js';
import type { Construct } from 'constructs';
import type { CustomResourceKind } from '../src/api/crd.js';
import { CUSTOM_RESOURCES } from '../src/controllers/index.js';

/** The label that aggregates a ClusterRole into the built-in `role` (admin, edit or view). */
export const aggregateTo = (role: 'admin' | 'edit' | 'view'): string => `rbac.authorization.k8s.io/aggregate-to-${role}`;

/** kubebuilder's editor verbs: everything on the kind but deletecollection. */
const EDIT = ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'];
const READ = ['get', 'list', 'watch'];

/** What the editor of `kind` may do: write the kind, read its status. */
export function tenantEditorRules(kind: CustomResourceKind): k8s.PolicyRule[] {
  return [
    { apiGroups: [kind.group], resources: [kind.resource], verbs: EDIT },
    { apiGroups: [kind.group], resources: [`${kind.resource}/status`], verbs: ['get'] },
  ];
}

/** What the viewer of `kind` may do: read the kind and its status. */
export function tenantViewerRules(kind: CustomResourceKind): k8s.PolicyRule[] {
  return [{ apiGroups: [kind.group], resources: [kind.resource, `${kind.resource}/status`], verbs: READ }];
}

export interface TenantRolesProps {
  /** The install's cluster-scoped name, which every role's name starts with. */
  readonly namePrefix: string;
  /** The install's labels; the aggregation label is added to them. */
  readonly labels: Record<string, string>;
  /** @default CUSTOM_RESOURCES: every kind whose CRD the install has */
  readonly kinds?: readonly CustomResourceKind[];
}

/** Adds the editor and viewer ClusterRole of each kind to `scope`; returns their names, in order. */
export function addTenantRoles(scope: Construct, props: TenantRolesProps): string[] {
  const names: string[] = [];
  const role = (id: string, name: string, aggregation: string[], rules: k8s.PolicyRule[]) => {
    const labels = { ...props.labels, ...Object.fromEntries(aggregation.map((label) => [label, 'true'])) };
    new k8s.KubeClusterRole(scope, id, { metadata: { name, labels }, rules });
    names.push(name);
  };
  for (const kind of props.kinds ?? CUSTOM_RESOURCES) {
    const base = `${props.namePrefix}-${kind.singular}`;
    role(`TenantEditor-${kind.kind}`, `${base}-editor`, [aggregateTo('admin'), aggregateTo('edit')], tenantEditorRules(kind));
    role(`TenantViewer-${kind.kind}`, `${base}-viewer`, [aggregateTo('view')], tenantViewerRules(kind));
  }
  return names;
}
