/**
 * A program's identity and grants in the campaign: the ServiceAccount the fault proxy
 * impersonates (user and groups as the API server authenticates a ServiceAccount token), and
 * Roles or ClusterRoles bound to it. The rules come from each program's own source of truth
 * (ours: infra/rbac.ts, as the constructs synthesize them); this file only wraps them in objects.
 */
import { leaderElectionRules, type PolicyRule } from '../../../../infra/rbac.js';
import { LEASE_NAME } from './types.js';

export interface Identity {
  user: string;
  groups: string[];
}

export interface ServiceAccountRef {
  name: string;
  namespace: string;
}

/** What a request made with the ServiceAccount's token authenticates as. */
export function serviceAccountIdentity(sa: ServiceAccountRef): Identity {
  return {
    user: `system:serviceaccount:${sa.namespace}:${sa.name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${sa.namespace}`, 'system:authenticated'],
  };
}

const RBAC = 'rbac.authorization.k8s.io';
const LABELS = { 'app.kubernetes.io/part-of': 'echoperator-fault-campaign' };

export function serviceAccount(sa: ServiceAccountRef): object {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa.name, namespace: sa.namespace, labels: LABELS } };
}

/**
 * A Role in `namespace` (or, without one, a ClusterRole) named `name` with `rules`, and its
 * binding of the same name to `sa`.
 */
export function grant(sa: ServiceAccountRef, name: string, rules: readonly PolicyRule[], namespace?: string): object[] {
  const kind = namespace ? 'Role' : 'ClusterRole';
  const metadata = { name, ...(namespace ? { namespace } : {}), labels: LABELS };
  return [
    { apiVersion: `${RBAC}/v1`, kind, metadata, rules },
    {
      apiVersion: `${RBAC}/v1`,
      kind: `${kind}Binding`,
      metadata,
      roleRef: { apiGroup: RBAC, kind, name },
      subjects: [{ kind: 'ServiceAccount', name: sa.name, namespace: sa.namespace }],
    },
  ];
}

/**
 * The ServiceAccount `name` in `namespace`, its identity, a Role there with `rules`, and the
 * leader-election Role on LEASE_NAME there (infra's leaderElectionRules), both bound to it: what
 * a program needs when it watches one namespace and keeps its Lease in it.
 */
export function namespacedRbac(name: string, namespace: string, rules: readonly PolicyRule[]): Identity & { manifests: object[] } {
  const sa = { name, namespace };
  return {
    ...serviceAccountIdentity(sa),
    manifests: [
      serviceAccount(sa),
      ...grant(sa, name, rules, namespace),
      ...grant(sa, `${name}-leader-election`, leaderElectionRules(LEASE_NAME), namespace),
    ],
  };
}
