/**
 * The rules of the confinement policy (infra/confinement.ts), each a CEL validation of its own
 * whose message starts with the rule's name in brackets (`[no-env] ...`), so a refusal says which
 * rule refused and docs/confinement.md's table finds it.
 *
 * Guarantees: every rule is written against the variables the policy declares (`job`: the Job
 * spec, a CronJob's jobTemplate.spec; `pod`: its pod spec; `ownerKind`/`ownerGroup`; and
 * `maxResources`), reads a field only after has() on it and on each parent (a missing field is
 * never an evaluation error, which failurePolicy Fail would turn into a refusal without the
 * rule's name), and holds for the objects src/controllers builds: the install's unit tests check
 * the operator's Job and CronJob against each rule's intent, the e2e tests against the API server.
 *
 * A rule reads either the object as it would be stored (`object`, CREATE and UPDATE) or the
 * object as it was (`oldObject`, UPDATE and DELETE); the other operations pass it, so a DELETE,
 * whose `object` is null, never evaluates a rule about the new object.
 */
import { ECHO_COMMAND_PREFIX } from '../src/controllers/common/pod.js';
import { CRONJOBS } from '../src/kube/resources.js';

export interface ConfinementRule {
  /** Short and stable: the message's first word, the docs' table key. */
  readonly name: string;
  /** `object`: CREATE and UPDATE, the new object. `oldObject`: UPDATE and DELETE, the stored one. */
  readonly on: 'object' | 'oldObject';
  /** CEL, true when the rule holds. */
  readonly expression: string;
  readonly message: string;
  /** CEL giving the message when it can say more than the fixed one (which still applies if it fails). */
  readonly messageExpression?: string;
}

export interface ConfinementRuleInputs {
  /** The only image the containers may run. */
  readonly jobImage: string;
  /** The most a container may request or be limited to, per resource (the install's jobMaxResources). */
  readonly maxResources: { readonly cpu: string; readonly memory: string };
  /** `a Job by an Echo (mmontes.io), a CronJob by a ScheduledEcho (mmontes.io)`: who must control what. */
  readonly ownerRule: string;
  /**
   * What the operator sets on every Job and CronJob it makes, read from its desired objects
   * (infra/confinement.ts), so the rules pin those values and cannot drift from them.
   */
  readonly pinned: PinnedFields;
}

export interface PinnedFields {
  /** The Job spec's backoffLimit. */
  readonly backoffLimit: number;
  /** The pod's restartPolicy. */
  readonly restartPolicy: string;
  /** The pod template's label keys: the operator's, and those the API server adds to a Job's. */
  readonly podLabelKeys: readonly string[];
  /** The label every pod template carries with this value (app.kubernetes.io/managed-by). */
  readonly managedBy: readonly [key: string, value: string];
  /** A CronJob's spec fields besides its schedule, time zone and job template. */
  readonly cronJob: {
    readonly concurrencyPolicy: string;
    readonly successfulJobsHistoryLimit: number;
    readonly failedJobsHistoryLimit: number;
    readonly startingDeadlineSeconds: number;
  };
}

export const cel = (s: string): string => JSON.stringify(s);

/** `(has(a.b) && has(a.b.c))`: whether `root.path` is set, never an error when a parent is missing. */
export function present(root: string, path: string): string {
  const parts = path.split('.');
  const tests = parts.map((_, i) => `has(${root}.${parts.slice(0, i + 1).join('.')})`);
  return tests.length === 1 ? tests[0]! : `(${tests.join(' && ')})`;
}

/** Whether `root.path` is set to `value` (a CEL literal). */
const is = (root: string, path: string, value: string): string => `(${present(root, path)} && ${root}.${path} == ${value})`;

/** Whether the list `root.path` is missing or empty. */
const none = (root: string, path: string): string => `(!${present(root, path)} || size(${root}.${path}) == 0)`;

/** `root.path` is missing or, when set, `value`: the field the operator leaves to the server's default. */
const unsetOr = (root: string, path: string, value: string): string => `(!${present(root, path)} || ${root}.${path} == ${value})`;

const POD = 'variables.pod';
const JOB = 'variables.job';
/** Every container: the rules below also refuse more than one, but each stands on its own. */
const eachContainer = (condition: string): string => `${POD}.containers.all(c, ${condition})`;
const unset = (root: string, fields: string[]): string => fields.map((f) => `!${present(root, f)}`).join(' && ');

/** The controller ownerReference of `root` names the owner kind in the owner group, and it is the only controller. */
function controlledBy(root: string): string {
  const refs = `${root}.metadata.ownerReferences`;
  return (
    `has(${refs}) && ${refs}.exists_one(r, has(r.controller) && r.controller == true) && ` +
    `${refs}.exists(r, has(r.controller) && r.controller == true && ` +
    "r.apiVersion.startsWith(variables.ownerGroup + '/') && r.kind == variables.ownerKind)"
  );
}

/** `expression` for a CronJob; any other kind passes. */
const forCronJobs = (expression: string): string => `(request.resource.resource != ${cel(CRONJOBS.resource)} || (${expression}))`;

/**
 * Exactly one ownerReference: the controller, blocking its owner's deletion, naming the owner's
 * API version and, where the owner's name fits a label value, the name the object's owner label
 * carries. An ownerReference names no namespace: it is read in the object's own, so with one
 * reference and its name tied to the object's labels, a forged reference must at least name the
 * owner the object says it belongs to. Whether that owner exists CEL cannot know (the garbage
 * collector removes the object when it does not).
 */
function ownerReference(): string {
  const refs = 'object.metadata.ownerReferences';
  const labels = 'object.metadata.labels';
  return (
    `has(${refs}) && size(${refs}) == 1 && ${refs}.all(r, has(r.blockOwnerDeletion) && r.blockOwnerDeletion == true && ` +
    `r.apiVersion == variables.ownerApiVersion && (size(r.name) > 63 || (has(${labels}) && ` +
    `variables.ownerLabel in ${labels} && ${labels}[variables.ownerLabel] == r.name)))`
  );
}

/** Requests and limits: cpu and memory only, each at most the maximum; a memory limit set. */
function resourcesWithin(): string {
  const within = (field: 'requests' | 'limits'): string =>
    `(!${present('c', `resources.${field}`)} || c.resources.${field}.all(k, k in variables.maxResources && ` +
    `!quantity(string(c.resources.${field}[k])).isGreaterThan(variables.maxResources[k])))`;
  return eachContainer(
    `${present('c', 'resources.limits')} && 'memory' in c.resources.limits && ${within('requests')} && ${within('limits')} && ` +
      `${none('c', 'resources.claims')}`,
  );
}

/** The rules, in the order the policy evaluates them (the first broken one is the refusal's message). */
export function confinementRules({ jobImage, maxResources, ownerRule, pinned }: ConfinementRuleInputs): ConfinementRule[] {
  const [managedByKey, managedByValue] = pinned.managedBy;
  const cron = pinned.cronJob;
  const [printf, format] = ECHO_COMMAND_PREFIX;
  const rule = (name: string, on: ConfinementRule['on'], expression: string, message: string, messageExpression?: string) => ({
    name,
    on,
    expression,
    message: `[${name}] ${message}`,
    ...(messageExpression ? { messageExpression: `${cel(`[${name}] `)} + ${messageExpression}` } : {}),
  });
  return [
    rule('owner', 'object', controlledBy('object'), `must be controller-owned by its custom resource: ${ownerRule}`),
    rule(
      'owned-before',
      'oldObject',
      controlledBy('oldObject'),
      `may change or delete only what its custom resource controls: ${ownerRule}`,
    ),
    rule(
      'one-container',
      'object',
      `size(${POD}.containers) == 1 && ${none(POD, 'initContainers')} && ${none(POD, 'ephemeralContainers')}`,
      'the pod must have exactly one container and no init or ephemeral containers',
    ),
    rule(
      'image',
      'object',
      eachContainer(`c.image == ${cel(jobImage)}`),
      `the container image must be ${jobImage} (the install's jobImage)`,
      `${cel(`the container image must be ${jobImage} (the install's jobImage), not `)} + ${POD}.containers.map(c, c.image).join(', ')`,
    ),
    rule(
      'command',
      'object',
      eachContainer(
        `has(c.command) && size(c.command) == 3 && c.command[0] == ${cel(printf!)} && c.command[1] == ${cel(format!)} && ${none('c', 'args')}`,
      ),
      `the container must run ${printf} '${format}' <message>, with no args`,
    ),
    rule(
      'no-env',
      'object',
      eachContainer(`${none('c', 'env')} && ${none('c', 'envFrom')}`),
      'the container must have no env and no envFrom (a $(VAR) in the command would print a Secret or ConfigMap into the log)',
    ),
    rule(
      'no-hooks',
      'object',
      eachContainer(unset('c', ['lifecycle', 'livenessProbe', 'readinessProbe', 'startupProbe'])),
      'the container must have no lifecycle hooks and no probes (they run commands of their own)',
    ),
    rule(
      'no-ports',
      'object',
      eachContainer(none('c', 'ports')),
      'the container must declare no ports (a hostPort takes a port of the node)',
    ),
    rule(
      'resources',
      'object',
      resourcesWithin(),
      `the container must limit its memory and request or limit at most cpu ${maxResources.cpu} and memory ${maxResources.memory} ` +
        "(the install's jobMaxResources), no other resources",
    ),
    rule('no-token', 'object', is(POD, 'automountServiceAccountToken', 'false'), 'the pod must set automountServiceAccountToken: false'),
    rule(
      'service-account',
      'object',
      ['serviceAccountName', 'serviceAccount'].map((f) => `(!${present(POD, f)} || ${POD}.${f} in ['', 'default'])`).join(' && '),
      'the pod must run as the namespace\'s "default" ServiceAccount (serviceAccountName unset or default)',
    ),
    rule('no-volumes', 'object', none(POD, 'volumes'), 'the pod must have no volumes'),
    rule(
      'no-host-namespaces',
      'object',
      `!${is(POD, 'hostNetwork', 'true')} && !${is(POD, 'hostPID', 'true')} && !${is(POD, 'hostIPC', 'true')}`,
      'the pod must not use the host network, PID or IPC namespace',
    ),
    rule(
      'not-privileged',
      'object',
      eachContainer(`!${is('c', 'securityContext.privileged', 'true')}`),
      'the container must not be privileged',
    ),
    rule(
      'non-root',
      'object',
      eachContainer(
        `(${present('c', 'securityContext.runAsNonRoot')} ? c.securityContext.runAsNonRoot == true : ${is(POD, 'securityContext.runAsNonRoot', 'true')}) && ` +
          `!${is('c', 'securityContext.runAsUser', '0')} && !${is('c', 'securityContext.runAsGroup', '0')}`,
      ) + ` && !${is(POD, 'securityContext.runAsUser', '0')} && !${is(POD, 'securityContext.runAsGroup', '0')}`,
      'the pod must run as non-root: runAsNonRoot true (pod or container), runAsUser and runAsGroup not 0',
    ),
    rule(
      'no-privilege-escalation',
      'object',
      eachContainer(is('c', 'securityContext.allowPrivilegeEscalation', 'false')),
      'the container must set allowPrivilegeEscalation: false',
    ),
    rule(
      'seccomp',
      'object',
      eachContainer(
        `${present('c', 'securityContext.seccompProfile')} ? c.securityContext.seccompProfile.type == 'RuntimeDefault' : ` +
          is(POD, 'securityContext.seccompProfile.type', "'RuntimeDefault'"),
      ),
      'the seccomp profile must be RuntimeDefault (pod or container)',
    ),
    rule(
      'capabilities',
      'object',
      eachContainer(
        `${present('c', 'securityContext.capabilities.drop')} && c.securityContext.capabilities.drop.exists(d, d == 'ALL') && ` +
          none('c', 'securityContext.capabilities.add'),
      ),
      'the container must drop ALL capabilities and add none',
    ),
    rule(
      'no-security-overrides',
      'object',
      `${unset(POD, ['securityContext.seLinuxOptions', 'securityContext.windowsOptions', 'securityContext.appArmorProfile', 'securityContext.sysctls'])} && ` +
        eachContainer(
          `${unset('c', ['securityContext.seLinuxOptions', 'securityContext.windowsOptions', 'securityContext.appArmorProfile'])} && ` +
            unsetOr('c', 'securityContext.procMount', "'Default'"),
        ) +
        ` && (!${present(JOB, 'template.metadata.annotations')} || ` +
        `!${JOB}.template.metadata.annotations.exists(k, k.startsWith('container.apparmor.security.beta.kubernetes.io/')))`,
      'the pod must not set SELinux, AppArmor or Windows options, sysctls or a procMount',
    ),
    rule(
      'no-node-name',
      'object',
      `!${present(POD, 'nodeName')}`,
      'the pod must not set nodeName (it would bypass the scheduler and taints)',
    ),
    rule(
      'no-placement',
      'object',
      `${unset(POD, ['nodeSelector', 'affinity', 'tolerations', 'topologySpreadConstraints', 'schedulingGates'])} && ` +
        unsetOr(POD, 'schedulerName', "'default-scheduler'"),
      'the pod must not choose its nodes: no nodeSelector, affinity, tolerations, topologySpreadConstraints, schedulingGates or schedulerName',
    ),
    rule(
      'no-priority',
      'object',
      unset(POD, ['priorityClassName', 'priority', 'preemptionPolicy']),
      'the pod must not set priorityClassName, priority or preemptionPolicy (it would preempt other pods)',
    ),
    rule('no-host-aliases', 'object', none(POD, 'hostAliases'), 'the pod must not set hostAliases'),
    rule(
      'no-dns-overrides',
      'object',
      `${unset(POD, ['hostname', 'subdomain', 'setHostnameAsFQDN', 'dnsConfig'])} && ${unsetOr(POD, 'dnsPolicy', "'ClusterFirst'")}`,
      'the pod must not set hostname, subdomain, setHostnameAsFQDN, dnsConfig or a dnsPolicy other than ClusterFirst',
    ),
    rule(
      'no-runtime-overrides',
      'object',
      `${unset(POD, ['runtimeClassName', 'overhead', 'os', 'resources'])} && !${is(POD, 'shareProcessNamespace', 'true')} && ` +
        none(POD, 'resourceClaims'),
      'the pod must not set runtimeClassName, overhead, os, pod-level resources, resourceClaims or shareProcessNamespace',
    ),
    rule('parallelism', 'object', unsetOr(JOB, 'parallelism', '1'), 'the Job must run one pod at a time: parallelism 1 or unset'),
    rule('completions', 'object', unsetOr(JOB, 'completions', '1'), 'the Job must complete once: completions 1 or unset'),
    rule(
      'no-manual-selector',
      'object',
      `!${is(JOB, 'manualSelector', 'true')}`,
      'the Job must not set manualSelector (a chosen selector adopts and deletes other pods)',
    ),
    rule(
      'owner-reference',
      'object',
      ownerReference(),
      "must have one ownerReference, blocking its owner's deletion, naming the owner's API version and the name in its owner label",
    ),
    rule(
      'no-finalizers',
      'object',
      `!has(object.metadata.finalizers) || object.metadata.finalizers.all(f, oldObject != null && has(oldObject.metadata.finalizers) && f in oldObject.metadata.finalizers)`,
      "must not get a finalizer (it would block its deletion, and its owner's)",
    ),
    rule(
      'backoff-limit',
      'object',
      is(JOB, 'backoffLimit', String(pinned.backoffLimit)),
      `the Job's backoffLimit must be ${pinned.backoffLimit}`,
    ),
    rule(
      'completion-mode',
      'object',
      `${unsetOr(JOB, 'completionMode', "'NonIndexed'")} && ` +
        unset(JOB, ['backoffLimitPerIndex', 'maxFailedIndexes', 'podFailurePolicy', 'successPolicy']),
      'the Job must be NonIndexed, without backoffLimitPerIndex, maxFailedIndexes, podFailurePolicy or successPolicy (each changes how often its pod may run)',
    ),
    rule(
      'restart-policy',
      'object',
      is(POD, 'restartPolicy', cel(pinned.restartPolicy)),
      `the pod's restartPolicy must be ${pinned.restartPolicy} (a failed run counts against backoffLimit)`,
    ),
    rule(
      'no-pull-secrets',
      'object',
      none(POD, 'imagePullSecrets'),
      "the pod must have no imagePullSecrets (they would use the namespace's registry credentials)",
    ),
    rule(
      'no-groups',
      'object',
      `${unset(POD, ['securityContext.fsGroup', 'securityContext.fsGroupChangePolicy', 'securityContext.supplementalGroupsPolicy'])} && ` +
        none(POD, 'securityContext.supplementalGroups'),
      'the pod must set no fsGroup, fsGroupChangePolicy, supplementalGroups or supplementalGroupsPolicy (group 0 reads what root may)',
    ),
    rule(
      'no-terminal',
      'object',
      eachContainer(`!${is('c', 'stdin', 'true')} && !${is('c', 'stdinOnce', 'true')} && !${is('c', 'tty', 'true')}`),
      'the container must not set stdin, stdinOnce or tty (an attachable shell)',
    ),
    rule(
      'pod-labels',
      'object',
      `${present(JOB, 'template.metadata.labels')} && ${JOB}.template.metadata.labels.all(k, k in ${JSON.stringify(pinned.podLabelKeys)}) && ` +
        `${cel(managedByKey)} in ${JOB}.template.metadata.labels && ${JOB}.template.metadata.labels[${cel(managedByKey)}] == ${cel(managedByValue)}`,
      `the pod's labels must be the operator's (${managedByKey}: ${managedByValue}; keys ${pinned.podLabelKeys.join(', ')}): ` +
        'others would put the pod behind a Service or under a NetworkPolicy meant for other pods',
    ),
    rule(
      'concurrency',
      'object',
      forCronJobs(is('object.spec', 'concurrencyPolicy', cel(cron.concurrencyPolicy))),
      `the CronJob's concurrencyPolicy must be ${cron.concurrencyPolicy}`,
    ),
    rule(
      'history-limits',
      'object',
      forCronJobs(
        `${is('object.spec', 'successfulJobsHistoryLimit', String(cron.successfulJobsHistoryLimit))} && ` +
          `${is('object.spec', 'failedJobsHistoryLimit', String(cron.failedJobsHistoryLimit))} && ` +
          is('object.spec', 'startingDeadlineSeconds', String(cron.startingDeadlineSeconds)),
      ),
      `the CronJob must keep successfulJobsHistoryLimit ${cron.successfulJobsHistoryLimit}, failedJobsHistoryLimit ${cron.failedJobsHistoryLimit} and startingDeadlineSeconds ${cron.startingDeadlineSeconds}`,
    ),
  ];
}
