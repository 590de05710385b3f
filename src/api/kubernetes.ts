/**
 * The oldest Kubernetes minor the operator supports: the first release in which every API the
 * CRDs and the install rely on is GA, so none needs a feature gate or a beta API:
 *   - CRD validation rules (x-kubernetes-validations, messageExpression, CEL's timestamp
 *     functions with a time zone): GA in 1.29;
 *   - ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, the ServiceAccount's
 *     confinement): GA in 1.30;
 *   - the PodDisruptionBudget's unhealthyPodEvictionPolicy (HA installs): GA in 1.31;
 *   - CronJob spec.timeZone (GA 1.27) and topology spread matchLabelKeys (on by default since 1.27).
 * The operator refuses to start against an older server (src/manager/preflight.ts), naming both
 * versions; scripts/testbed/controlplane/releases.ts tests this minor and the newest.
 */
export const MINIMUM_KUBERNETES = '1.31';
