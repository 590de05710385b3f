/**
 * The confinement policy: a ValidatingAdmissionPolicy (admissionregistration.k8s.io/v1, GA since
 * Kubernetes 1.30) and its binding that let the operator's ServiceAccount create and change only
 * Jobs and CronJobs of exactly the shape its controllers make (src/controllers/common/pod.ts and
 * the desired.ts of each controller), and delete only those its custom resources control, so a
 * stolen token or a compromised operator cannot use its Job and CronJob rights (cluster-wide in
 * the default install, kube-system included) to run any other pod, read a Secret through a pod's
 * log, take a node's port or priority, or delete someone else's Jobs.
 *
 * Guarantees, for a request by that ServiceAccount (and nobody else: matchConditions on the user
 * name) on a Job or CronJob:
 *  - CREATE and UPDATE: the object as it would be stored keeps every rule of
 *    infra/confinement-rules.ts about the new object (owner, container, command, image, no env,
 *    no ports, the restricted Pod Security fields set, no placement or priority, resources within
 *    the install's jobMaxResources, parallelism and completions 1...);
 *  - UPDATE and DELETE: the stored object (`oldObject`) is controller-owned by the kind its
 *    controller declares (a Job by an Echo, a CronJob by a ScheduledEcho, in mmontes.io), so the
 *    token cannot delete or take over an object it did not make;
 *  - each rule is a validation of its own whose message starts with the rule's name; the first
 *    broken rule is the refusal's message; the refusal is 403 Forbidden (reason Forbidden): the
 *    same object is valid for any other user, so it is a refusal of who asks, which the operator
 *    retries with backoff, like an RBAC refusal;
 *  - failurePolicy Fail: a rule that cannot be evaluated refuses; the confinement never fails open.
 * One policy for the three operations, each rule guarded by the operation it is about (a DELETE
 * has no `object`), so one binding and one name say whether the operator is confined.
 *
 * An owned kind that runs no pod (a ConfigMap, a Service) is not matched: RBAC alone bounds it.
 *
 * The rule's literals (image, command, owners, the operator's own resources) come from the same
 * sources the operator uses, so they cannot drift apart.
 */
import type { Construct } from 'constructs';
import type { Echo } from '../src/api/echo.js';
import type { ScheduledEcho } from '../src/api/scheduledecho.js';
import { MANAGED_BY, MANAGED_BY_LABEL } from '../src/controllers/common/labels.js';
import { ownerLabel } from '../src/controllers/common/owner.js';
import { desiredJob } from '../src/controllers/echo/desired.js';
import { CONTROLLERS } from '../src/controllers/index.js';
import { desiredCronJob } from '../src/controllers/scheduledecho/desired.js';
import type { ControllerSpec } from '../src/runtime/controller/index.js';
import { apiVersionOf, CONFIGMAPS, CRONJOBS, JOBS, SERVICES, type ResourceType } from '../src/kube/resources.js';
import { cel, confinementRules, type ConfinementRule, type PinnedFields } from './confinement-rules.js';
import * as k8s from './imports/k8s.js';

const key = (type: ResourceType): string => `${type.group}/${type.resource}`;

/**
 * Where each kind a controller may own holds its Job spec (the pod template is its `template`),
 * as a CEL path from `object`, or null for a kind that runs no pod, which needs no confining.
 */
const JOB_SPEC_PATH: Record<string, string | null> = {
  [key(JOBS)]: 'object.spec',
  [key(CRONJOBS)]: 'object.spec.jobTemplate.spec',
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
  /** The most each of their containers may request or be limited to (the install's jobMaxResources). */
  readonly jobMaxResources: { readonly cpu: string; readonly memory: string };
  readonly labels: Record<string, string>;
}

const celMap = (entries: [string, string][]): string => `{${entries.map(([k, v]) => `${cel(k)}: ${v}`).join(', ')}}`;
const celStringMap = (entries: [string, string][]): string => celMap(entries.map(([k, v]) => [k, cel(v)]));

/** The kinds the controllers write that run pods, each with the primary kind that must own it. */
export function confinedKinds(
  declarations: readonly ControllerSpec[] = CONTROLLERS,
): { type: ResourceType; owner: ResourceType; jobSpec: string; template: string }[] {
  return declarations.flatMap((d) =>
    d.owned.flatMap((o) => {
      const jobSpec = JOB_SPEC_PATH[key(o.type)];
      // A new owned kind must say where its pod template is (or that it runs none), or the policy
      // would not confine it.
      if (jobSpec === undefined) throw new Error(`confinement: no pod template path for ${o.type.kind} (infra/confinement.ts)`);
      return jobSpec === null ? [] : [{ type: o.type, owner: d.primary, jobSpec, template: `${jobSpec}.template` }];
    }),
  );
}

/**
 * The labels the API server adds to a Job's pod template (the Job's selector), which the pod's
 * labels may hold besides the operator's.
 */
const JOB_CONTROLLER_LABELS = ['batch.kubernetes.io/controller-uid', 'batch.kubernetes.io/job-name', 'controller-uid', 'job-name'];

/** What the operator sets on its Jobs and CronJobs, read from the objects its controllers build. */
export function pinnedFields(jobImage: string): PinnedFields {
  const owner = { name: 'x', namespace: 'x', uid: 'x', generation: 1 };
  const job = desiredJob({ metadata: owner, spec: { message: 'x' } } as Echo, jobImage);
  const cronJob = desiredCronJob({ metadata: owner, spec: { message: 'x', schedule: '@hourly' } } as ScheduledEcho, jobImage);
  const cron = cronJob.spec;
  const labelKeys = [job, cronJob.spec.jobTemplate].flatMap((o) => Object.keys(o.spec!.template.metadata!.labels!));
  return {
    backoffLimit: job.spec!.backoffLimit!,
    restartPolicy: job.spec!.template.spec!.restartPolicy!,
    podLabelKeys: [...new Set([...labelKeys, ...JOB_CONTROLLER_LABELS])].sort(),
    managedBy: [MANAGED_BY_LABEL, MANAGED_BY],
    cronJob: {
      concurrencyPolicy: cron.concurrencyPolicy!,
      successfulJobsHistoryLimit: cron.successfulJobsHistoryLimit!,
      failedJobsHistoryLimit: cron.failedJobsHistoryLimit!,
      startingDeadlineSeconds: cron.startingDeadlineSeconds!,
    },
  };
}

/** `cond ? a : cond2 ? b : c` over the owned kinds, keyed by the request's resource. */
function byResource(kinds: { type: ResourceType }[], value: (i: number) => string): string {
  return kinds.reduceRight(
    (otherwise, k, i) =>
      otherwise === '' ? value(i) : `request.resource.resource == ${cel(k.type.resource)} ? ${value(i)} : ${otherwise}`,
    '',
  );
}

/** The operations whose requests carry what a rule reads; the others pass it. */
const OPERATIONS_WITHOUT: Record<ConfinementRule['on'], string> = { object: 'DELETE', oldObject: 'CREATE' };

/** The rule as a validation: true for an operation without the object it reads. */
function validation(r: ConfinementRule): { expression: string; message: string; messageExpression?: string; reason: string } {
  return {
    expression: `request.operation == ${cel(OPERATIONS_WITHOUT[r.on])} || (${r.expression})`,
    message: r.message,
    ...(r.messageExpression ? { messageExpression: r.messageExpression } : {}),
    reason: 'Forbidden',
  };
}

/** Adds the policy and its binding (Deny) to `scope`. */
export function addConfinementPolicy(scope: Construct, props: ConfinementPolicyProps): void {
  const kinds = confinedKinds();
  const user = `system:serviceaccount:${props.serviceAccount.namespace}:${props.serviceAccount.name}`;
  const groups = [...new Set(kinds.map((k) => k.type.group))];
  const metadata = { name: props.name, labels: props.labels };
  const an = (word: string): string => `${/^[AEIOU]/.test(word) ? 'an' : 'a'} ${word}`;
  const ownerRule = kinds.map((k) => `${an(k.type.kind)} by ${an(k.owner.kind)} (${k.owner.group})`).join(', ');
  const rules = confinementRules({
    jobImage: props.jobImage,
    maxResources: props.jobMaxResources,
    ownerRule,
    pinned: pinnedFields(props.jobImage),
  });
  new k8s.KubeValidatingAdmissionPolicy(scope, 'ConfinementPolicy', {
    metadata,
    spec: {
      // A policy that cannot be evaluated refuses: the confinement never fails open.
      failurePolicy: 'Fail',
      matchConstraints: {
        resourceRules: groups.map((group) => ({
          apiGroups: [group],
          apiVersions: ['*'],
          operations: ['CREATE', 'UPDATE', 'DELETE'],
          resources: kinds.filter((k) => k.type.group === group).map((k) => k.type.resource),
        })),
      },
      matchConditions: [{ name: 'operator-service-account', expression: `request.userInfo.username == ${cel(user)}` }],
      // Variables are evaluated when a rule first reads them: a DELETE never reads `object`.
      variables: [
        { name: 'ownerKind', expression: `${celStringMap(kinds.map((k) => [k.type.resource, k.owner.kind]))}[request.resource.resource]` },
        {
          name: 'ownerGroup',
          expression: `${celStringMap(kinds.map((k) => [k.type.resource, k.owner.group]))}[request.resource.resource]`,
        },
        {
          name: 'ownerApiVersion',
          expression: `${celStringMap(kinds.map((k) => [k.type.resource, apiVersionOf(k.owner)]))}[request.resource.resource]`,
        },
        {
          name: 'ownerLabel',
          expression: `${celStringMap(kinds.map((k) => [k.type.resource, ownerLabel(k.owner as ResourceType & { singular: string })]))}[request.resource.resource]`,
        },
        { name: 'job', expression: `(${byResource(kinds, (i) => kinds[i]!.jobSpec)})` },
        { name: 'pod', expression: `(${byResource(kinds, (i) => kinds[i]!.template)}).spec` },
        {
          name: 'maxResources',
          expression: celMap(Object.entries(props.jobMaxResources).map(([k, v]) => [k, `quantity(${cel(v)})`])),
        },
      ],
      validations: rules.map(validation),
    },
  });
  new k8s.KubeValidatingAdmissionPolicyBinding(scope, 'ConfinementPolicyBinding', {
    metadata,
    spec: { policyName: props.name, validationActions: ['Deny'] },
  });
}
