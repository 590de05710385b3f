/**
 * The operator's RBAC rules, derived from its controllers' declarations (src/controllers): what
 * each controller reads and writes, plus Events, plus the Lease when HA is on.
 */
import type { k8s } from 'cdk8s-plus-28';
import { CONTROLLERS } from '../src/controllers/index.js';
import { EVENTS, LEASES } from '../src/kube/resources.js';
import { rulesFor, type PolicyRule } from '../src/runtime/controller/builder.js';

export type { PolicyRule };

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
