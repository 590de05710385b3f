/**
 * Job creates refused by real server-side admission: a ValidatingAdmissionPolicy whose one
 * validation is false (the server answers 422 Invalid with `message`), bound to the namespaces
 * whose labels match; and a Job to probe it with by a dry-run create, since the server enforces
 * a new policy only once it has loaded it. Pure: manifests only.
 */

/** The policy and its binding, both named `name` (cluster-scoped). */
export function denyJobCreates(name: string, namespaceLabels: Record<string, string>, message: string): [object, object] {
  const policy = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata: { name },
    spec: {
      failurePolicy: 'Fail',
      matchConstraints: { resourceRules: [{ apiGroups: ['batch'], apiVersions: ['*'], operations: ['CREATE'], resources: ['jobs'] }] },
      validations: [{ expression: 'false', message }],
    },
  };
  const binding = {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata: { name },
    spec: { policyName: name, validationActions: ['Deny'], matchResources: { namespaceSelector: { matchLabels: namespaceLabels } } },
  };
  return [policy, binding];
}

/** A Job the server accepts but for the policy: what a dry-run create probes it with. */
export const PROBE_JOB = {
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: 'probe' },
  spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x' }] } } },
};
