/**
 * The operator's RBAC rules, derived from its controllers' declarations (src/controllers): what
 * each controller reads and writes, plus Events, plus the Lease when HA is on.
 */
import type * as k8s from './imports/k8s.js';
import { CONTROLLERS } from '../src/controllers/index.js';
import { EVENTS, LEASES } from '../src/kube/resources.js';
import type { ControllerSpec, PolicyRule, Verb } from '../src/runtime/controller/index.js';

export type { PolicyRule };

const READ: Verb[] = ['get', 'list', 'watch'];

/**
 * The rules a set of controllers needs: to read its primary kinds, patch their status (status is
 * only ever patched, merge or apply, never replaced: no `update` on <primary>/status), and set
 * owner references that block owner deletion (update on <primary>/finalizers, which the
 * OwnerReferencesPermissionEnforcement admission plugin checks whatever the verb of the write that
 * sets them); to read and write, as declared, the kinds they own; to read the kinds they watch;
 * and the rules they declare besides. Resources of one group with the same verbs share a rule; a
 * declared rule naming resourceNames stays a rule of its own.
 */
export function rulesFor(declarations: readonly ControllerSpec[]): PolicyRule[] {
  const verbsByResource = new Map<string, { group: string; resource: string; verbs: Set<Verb> }>();
  const grant = (group: string, resource: string, verbs: Verb[]): void => {
    const key = `${group}/${resource}`;
    const entry = verbsByResource.get(key) ?? { group, resource, verbs: new Set<Verb>() };
    for (const v of verbs) entry.verbs.add(v);
    verbsByResource.set(key, entry);
  };
  for (const d of declarations) {
    grant(d.primary.group, d.primary.resource, READ);
    grant(d.primary.group, `${d.primary.resource}/status`, ['patch']);
    grant(d.primary.group, `${d.primary.resource}/finalizers`, ['update']);
    for (const o of d.owned) grant(o.type.group, o.type.resource, [...READ, ...o.writes]);
    for (const w of d.watched) grant(w.type.group, w.type.resource, READ);
    for (const r of d.rules.filter((rule) => !rule.resourceNames)) {
      for (const group of r.apiGroups) for (const resource of r.resources) grant(group, resource, r.verbs);
    }
  }
  const order: Verb[] = ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'];
  const rules = new Map<string, PolicyRule>();
  for (const { group, resource, verbs } of verbsByResource.values()) {
    const sorted = order.filter((v) => verbs.has(v));
    const key = `${group}|${sorted.join(',')}`;
    const rule = rules.get(key) ?? { apiGroups: [group], resources: [], verbs: sorted };
    rule.resources.push(resource);
    rules.set(key, rule);
  }
  const named = declarations.flatMap((d) => d.rules.filter((rule) => rule.resourceNames));
  return [...rules.values(), ...named];
}

/**
 * What the operator does in every namespace it watches, and nothing more: what its controllers
 * declare (read their custom resources and write their status; set owner references that block
 * owner deletion, which OwnerReferencesPermissionEnforcement, on by default in OpenShift, checks
 * as update on the owner's finalizers; read and write the kinds they own, as declared), and record
 * Events. No wildcard, no Secrets, no Pods.
 */
export function operatorRules(): PolicyRule[] {
  return [...rulesFor(CONTROLLERS), { apiGroups: [EVENTS.group], resources: [EVENTS.resource], verbs: ['create', 'patch'] }];
}

/**
 * Leader election, in the operator's namespace only: create the Lease (create cannot be limited
 * by name: the name is not known to RBAC before the object exists), and everything else on that
 * one Lease only.
 */
export function leaderElectionRules(leaseName: string): PolicyRule[] {
  return [
    { apiGroups: [LEASES.group], resources: [LEASES.resource], verbs: ['create'] },
    { apiGroups: [LEASES.group], resources: [LEASES.resource], resourceNames: [leaseName], verbs: ['get', 'update', 'list', 'watch'] },
  ];
}

/**
 * What the metrics endpoint needs to check its callers (kubebuilder's `metrics-auth-role`):
 * create TokenReviews and SubjectAccessReviews. Cluster-scoped kinds, hence a ClusterRole.
 */
export function metricsAuthRules(): k8s.PolicyRule[] {
  return [
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ];
}

/** The right to read the metrics (kubebuilder's `metrics-reader`): bind scrapers to it. */
export function metricsReaderRules(path: string): k8s.PolicyRule[] {
  return [{ nonResourceUrLs: [path], verbs: ['get'] }]; // cdk8s's spelling; written as nonResourceURLs
}
