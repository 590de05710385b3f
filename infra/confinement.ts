/**
 * The confinement policy: a ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, GA since
 * Kubernetes 1.30) and its binding that let the operator's ServiceAccount create and update only
 * Jobs and CronJobs of the shape its controllers make (src/controllers/common/pod.ts and the
 * desired.ts of each controller), so a stolen token or a compromised operator cannot use its
 * Job and CronJob rights to run an arbitrary pod (in kube-system or anywhere else).
 *
 * Guarantees, for a CREATE or UPDATE of a Job or CronJob by that ServiceAccount (and nobody else:
 * matchConditions on the user name), each a validation of its own whose message names the rule:
 *  - controller-owned by the primary kind its controller declares (a Job by an Echo, a CronJob by
 *    a ScheduledEcho, in group mmontes.io);
 *  - exactly one container, no init or ephemeral containers;
 *  - the container image is the install's jobImage;
 *  - the command is printf '%s\n' <message> (any message, no args);
 *  - no lifecycle hooks or probes (they would run commands of their own);
 *  - automountServiceAccountToken false, no ServiceAccount other than `default`;
 *  - no volumes, no host network/PID/IPC, no privileged container, no added capabilities.
 * An UPDATE is checked on the whole object as it would be stored (a server-side apply of a
 * CronJob included), so a field another manager set that breaks a rule refuses the operator's
 * apply too. DELETE is not matched: the operator may always remove what it made. The refusal is
 * 403 Forbidden (reason Forbidden): the same object is valid for any other user, so it is a
 * refusal of who asks, which the operator retries with backoff, like an RBAC refusal.
 *
 * An owned kind that runs no pod (a ConfigMap, a Service) is not matched: RBAC alone bounds it.
 *
 * The rule's literals (image, command, owners) come from the same sources the operator uses, so
 * they cannot drift apart. Plain ApiObjects: cdk8s-plus-28's k8s types predate the v1 policy.
 */
import { ApiObject } from 'cdk8s';
import type { Construct } from 'constructs';
import { ECHO_COMMAND_PREFIX } from '../src/controllers/common/pod.js';
import { CONTROLLERS } from '../src/controllers/index.js';
import type { ControllerSpec } from '../src/runtime/controller/index.js';
import { CONFIGMAPS, CRONJOBS, JOBS, SERVICES, type ResourceType } from '../src/kube/resources.js';

const key = (type: ResourceType): string => `${type.group}/${type.resource}`;

/**
 * Where each kind a controller may own holds its pod template, as a CEL path from `object`, or
 * null for a kind that runs no pod, which needs no confining.
 */
const POD_TEMPLATE_PATH: Record<string, string | null> = {
  [key(JOBS)]: 'object.spec.template',
  [key(CRONJOBS)]: 'object.spec.jobTemplate.spec.template',
  [key(CONFIGMAPS)]: null,
  [key(SERVICES)]: null,
};

export interface ConfinementPolicyProps {
  /** Name of the policy and of its binding (cluster-scoped). */
  readonly name: string;
  /** The ServiceAccount confined. */
  readonly serviceAccount: { readonly name: string; readonly namespace: string };
  /** The only image its Jobs and CronJobs may run. */
  readonly jobImage: string;
  readonly labels: Record<string, string>;
}

interface Validation {
  expression: string;
  message: string;
  messageExpression?: string;
}

const cel = (s: string): string => JSON.stringify(s);
const celMap = (entries: [string, string][]): string => `{${entries.map(([k, v]) => `${cel(k)}: ${cel(v)}`).join(', ')}}`;

/** The kinds the controllers write that run pods, each with the primary kind that must own it. */
export function confinedKinds(
  declarations: readonly ControllerSpec[] = CONTROLLERS,
): { type: ResourceType; owner: ResourceType; template: string }[] {
  return declarations.flatMap((d) =>
    d.owned.flatMap((o) => {
      const template = POD_TEMPLATE_PATH[key(o.type)];
      // A new owned kind must say where its pod template is (or that it runs none), or the policy
      // would not confine it.
      if (template === undefined) throw new Error(`confinement: no pod template path for ${o.type.kind} (infra/confinement.ts)`);
      return template === null ? [] : [{ type: o.type, owner: d.primary, template }];
    }),
  );
}

/** `cond ? a : cond2 ? b : c` over the owned kinds, keyed by the request's resource. */
function byResource(kinds: { type: ResourceType }[], value: (i: number) => string): string {
  return kinds.reduceRight(
    (otherwise, k, i) =>
      otherwise === '' ? value(i) : `request.resource.resource == ${cel(k.type.resource)} ? ${value(i)} : ${otherwise}`,
    '',
  );
}

function validations(jobImage: string, kinds: ReturnType<typeof confinedKinds>): Validation[] {
  const an = (word: string): string => `${/^[AEIOU]/.test(word) ? 'an' : 'a'} ${word}`;
  const ownerRule = kinds.map((k) => `${an(k.type.kind)} by ${an(k.owner.kind)} (${k.owner.group})`).join(', ');
  const isTrue = (path: string, field: string): string => `(has(${path}.${field}) && ${path}.${field} == true)`;
  const [printf, format] = ECHO_COMMAND_PREFIX;
  return [
    {
      expression:
        'has(object.metadata.ownerReferences) && ' +
        'object.metadata.ownerReferences.exists_one(r, has(r.controller) && r.controller == true) && ' +
        'object.metadata.ownerReferences.exists(r, has(r.controller) && r.controller == true && ' +
        "r.apiVersion.startsWith(variables.ownerGroup + '/') && r.kind == variables.ownerKind)",
      message: `must be controller-owned by its custom resource: ${ownerRule}`,
    },
    {
      expression:
        'size(variables.pod.containers) == 1 && ' +
        '(!has(variables.pod.initContainers) || size(variables.pod.initContainers) == 0) && ' +
        '(!has(variables.pod.ephemeralContainers) || size(variables.pod.ephemeralContainers) == 0)',
      message: 'the pod must have exactly one container and no init or ephemeral containers',
    },
    {
      expression: `variables.pod.containers.all(c, c.image == ${cel(jobImage)})`,
      message: `the container image must be ${jobImage} (the install's jobImage)`,
      messageExpression: `${cel(`the container image must be ${jobImage} (the install's jobImage), not `)} + variables.pod.containers.map(c, c.image).join(', ')`,
    },
    {
      expression:
        'variables.pod.containers.all(c, has(c.command) && size(c.command) == 3 && ' +
        `c.command[0] == ${cel(printf!)} && c.command[1] == ${cel(format!)} && (!has(c.args) || size(c.args) == 0))`,
      message: `the container must run ${printf} '${format}' <message>, with no args`,
    },
    {
      expression:
        'variables.pod.containers.all(c, !has(c.lifecycle) && !has(c.livenessProbe) && !has(c.readinessProbe) && !has(c.startupProbe))',
      message: 'the container must have no lifecycle hooks and no probes (they run commands of their own)',
    },
    {
      expression: 'has(variables.pod.automountServiceAccountToken) && variables.pod.automountServiceAccountToken == false',
      message: 'the pod must set automountServiceAccountToken: false',
    },
    {
      expression:
        "(!has(variables.pod.serviceAccountName) || variables.pod.serviceAccountName in ['', 'default']) && " +
        "(!has(variables.pod.serviceAccount) || variables.pod.serviceAccount in ['', 'default'])",
      message: 'the pod must run as the namespace\'s "default" ServiceAccount (serviceAccountName unset or default)',
    },
    {
      expression: '!has(variables.pod.volumes) || size(variables.pod.volumes) == 0',
      message: 'the pod must have no volumes',
    },
    {
      expression: `!${isTrue('variables.pod', 'hostNetwork')} && !${isTrue('variables.pod', 'hostPID')} && !${isTrue('variables.pod', 'hostIPC')}`,
      message: 'the pod must not use the host network, PID or IPC namespace',
    },
    {
      expression:
        'variables.pod.containers.all(c, !has(c.securityContext) || ' +
        `(!${isTrue('c.securityContext', 'privileged')} && ` +
        '(!has(c.securityContext.capabilities) || !has(c.securityContext.capabilities.add) || size(c.securityContext.capabilities.add) == 0)))',
      message: 'the container must not be privileged nor add capabilities',
    },
  ];
}

/** Adds the policy and its binding (Deny) to `scope`. */
export function addConfinementPolicy(scope: Construct, props: ConfinementPolicyProps): void {
  const kinds = confinedKinds();
  const user = `system:serviceaccount:${props.serviceAccount.namespace}:${props.serviceAccount.name}`;
  const groups = [...new Set(kinds.map((k) => k.type.group))];
  const metadata = { name: props.name, labels: props.labels };
  new ApiObject(scope, 'ConfinementPolicy', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicy',
    metadata,
    spec: {
      // A policy that cannot be evaluated refuses: the confinement never fails open.
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: groups.map((group) => ({
          apiGroups: [group],
          apiVersions: ['*'],
          operations: ['CREATE', 'UPDATE'],
          resources: kinds.filter((k) => k.type.group === group).map((k) => k.type.resource),
        })),
      },
      matchConditions: [{ name: 'operator-service-account', expression: `request.userInfo.username == ${cel(user)}` }],
      variables: [
        { name: 'ownerKind', expression: `${celMap(kinds.map((k) => [k.type.resource, k.owner.kind]))}[request.resource.resource]` },
        { name: 'ownerGroup', expression: `${celMap(kinds.map((k) => [k.type.resource, k.owner.group]))}[request.resource.resource]` },
        { name: 'pod', expression: `(${byResource(kinds, (i) => kinds[i]!.template)}).spec` },
      ],
      validations: validations(props.jobImage, kinds).map((v) => ({ ...v, reason: 'Forbidden' })),
    },
  });
  new ApiObject(scope, 'ConfinementPolicyBinding', {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingAdmissionPolicyBinding',
    metadata,
    spec: { policyName: props.name, validationActions: ['Deny'] },
  });
}
