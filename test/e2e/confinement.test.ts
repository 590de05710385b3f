/**
 * The confinement policy (infra/confinement.ts) on the real API server, with the operator's own
 * ServiceAccount token (a kubeconfig of a TokenRequest token, as a stolen token would be used):
 * the operator's Job and CronJob are admitted; one object per rule, each the operator's shape with
 * one thing changed, is refused with the rule's name in the message (in kube-system too, where
 * the default install's RBAC lets the token create Jobs), while an admin may create every one of
 * them (the policy binds the ServiceAccount only); an UPDATE is checked on the object as stored;
 * a DELETE, or an UPDATE, of a Job or CronJob the operator does not control is refused, its own
 * are allowed.
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import type { V1Container, V1CronJob, V1Job, V1JobSpec, V1PodSpec } from '@kubernetes/client-node';
import { FIELD_MANAGER } from '../../src/controllers/common/labels.js';
import { desiredJob } from '../../src/controllers/echo/desired.js';
import { desiredCronJob } from '../../src/controllers/scheduledecho/desired.js';
import { confinementActive, installEchoperator, type Install } from '../support/install.js';
import { applyHiAndTick, kubectl, kubectlOk, testNamespace } from '../support/kube.js';
import { getEcho } from '../support/runs.js';
import { getScheduledEcho } from '../support/scheduledechos.js';

type Confined = V1Job | V1CronJob;

const isJob = (o: Confined): o is V1Job => o.kind === 'Job';
const jobSpec = (o: Confined): V1JobSpec => (isJob(o) ? o.spec! : o.spec.jobTemplate.spec!);
const podSpec = (o: Confined): V1PodSpec => jobSpec(o).template.spec!;
const container = (o: Confined): V1Container => podSpec(o).containers[0]!;

/** A copy of `obj` with `change` made to it. */
function reshaped<T>(obj: T, change: (copy: T) => void): T {
  const copy = structuredClone(obj);
  change(copy);
  return copy;
}

/** kubectl with the operator's ServiceAccount token. */
function asOperator(install: Install, args: string[], obj?: unknown): ReturnType<typeof kubectl> {
  return kubectl(['--kubeconfig', install.kubeconfig, ...args], { input: obj === undefined ? undefined : JSON.stringify(obj) });
}

/** The API server's refusal by the policy, naming `rule`. */
function refusal(policy: string, rule: string): RegExp {
  const escape = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(
    `\\(Forbidden\\).*is forbidden: ValidatingAdmissionPolicy '${escape(policy)}' with binding '${escape(policy)}' denied request: \\[${escape(rule)}\\] `,
  );
}

/**
 * The default install (a ClusterRole: RBAC lets the ServiceAccount create Jobs in kube-system too)
 * without the operator's pod, its policy in force, and the Job and CronJob the operator would make
 * for an Echo `hi` and a ScheduledEcho `tick` in a new namespace.
 */
async function confinedInstall(t: TestContext, prefix: string) {
  const install = installEchoperator(t, {}, { workload: false });
  const ns = testNamespace(t, prefix);
  await confinementActive(install, ns);
  applyHiAndTick(ns, '@hourly');
  const image = install.echoperator.config.jobImage;
  return {
    install,
    policy: install.echoperator.confinementPolicyName!,
    ns,
    image,
    job: desiredJob(getEcho(ns, 'hi'), image),
    cronJob: desiredCronJob(getScheduledEcho(ns, 'tick'), image),
  };
}

test("the operator's token may create only Jobs and CronJobs of its shape: one refusal per rule, naming it; admins are not bound", async (t) => {
  const { install, policy, image, job, cronJob } = await confinedInstall(t, 'confined');
  const dryRun = (obj: unknown, admin = false) =>
    admin
      ? kubectl(['create', '--dry-run=server', '-f', '-'], { input: JSON.stringify(obj) })
      : asOperator(install, ['create', '--dry-run=server', '-f', '-'], obj);

  // The operator's own shapes pass (RBAC allows them: any refusal below is the policy's).
  for (const own of [job, cronJob]) {
    const r = dryRun(own);
    assert.equal(r.code, 0, `${own.kind}: ${r.stderr}`);
  }
  assert.equal(asOperator(install, ['auth', 'can-i', 'create', 'jobs', '-n', 'kube-system']).stdout.trim(), 'yes');

  const inKubeSystem = <T extends Confined>(o: T): T => reshaped(o, (c) => (c.metadata!.namespace = 'kube-system'));
  // The security review's reproduction: the operator's own printf, printing a Secret the kubelet expands.
  const secretPrinter = reshaped(inKubeSystem(job), (j) => {
    container(j).command = ['printf', '%s\\n', '$(T)'];
    container(j).env = [{ name: 'T', valueFrom: { secretKeyRef: { name: 'bootstrap-token-abcdef', key: 'token-secret' } } }];
  });
  const refused: [what: string, obj: Confined, rule: string][] = [
    ['a secretKeyRef env var printed by printf, in kube-system', secretPrinter, 'no-env'],
    ['envFrom a Secret, in a CronJob', reshaped(cronJob, (c) => (container(c).envFrom = [{ secretRef: { name: 'db' } }])), 'no-env'],
    [
      'a root pod (runAsUser 0)',
      reshaped(job, (j) => (podSpec(j).securityContext = { ...podSpec(j).securityContext, runAsNonRoot: false, runAsUser: 0 })),
      'non-root',
    ],
    ['no runAsNonRoot', reshaped(job, (j) => delete podSpec(j).securityContext!.runAsNonRoot), 'non-root'],
    [
      'allowPrivilegeEscalation true',
      reshaped(job, (j) => (container(j).securityContext!.allowPrivilegeEscalation = true)),
      'no-privilege-escalation',
    ],
    [
      'no allowPrivilegeEscalation',
      reshaped(cronJob, (c) => delete container(c).securityContext!.allowPrivilegeEscalation),
      'no-privilege-escalation',
    ],
    ['seccomp Unconfined', reshaped(job, (j) => (container(j).securityContext!.seccompProfile = { type: 'Unconfined' })), 'seccomp'],
    ['no seccomp profile', reshaped(job, (j) => delete podSpec(j).securityContext!.seccompProfile), 'seccomp'],
    ['capabilities not dropped', reshaped(job, (j) => delete container(j).securityContext!.capabilities), 'capabilities'],
    ['an added capability', reshaped(job, (j) => (container(j).securityContext!.capabilities!.add = ['NET_RAW'])), 'capabilities'],
    [
      'a privileged container',
      reshaped(
        job,
        (j) => (container(j).securityContext = { ...container(j).securityContext, privileged: true, allowPrivilegeEscalation: true }),
      ),
      'not-privileged',
    ],
    [
      'AppArmor unconfined',
      reshaped(job, (j) => (container(j).securityContext!.appArmorProfile = { type: 'Unconfined' })),
      'no-security-overrides',
    ],
    ['hostPort 10250', reshaped(inKubeSystem(job), (j) => (container(j).ports = [{ containerPort: 10250, hostPort: 10250 }])), 'no-ports'],
    [
      'priorityClassName system-node-critical',
      reshaped(inKubeSystem(job), (j) => (podSpec(j).priorityClassName = 'system-node-critical')),
      'no-priority',
    ],
    ['nodeName', reshaped(job, (j) => (podSpec(j).nodeName = 'control-plane')), 'no-node-name'],
    [
      'hostAliases',
      reshaped(job, (j) => (podSpec(j).hostAliases = [{ ip: '10.0.0.1', hostnames: ['kubernetes.default'] }])),
      'no-host-aliases',
    ],
    [
      'a control-plane toleration',
      reshaped(cronJob, (c) => (podSpec(c).tolerations = [{ key: 'node-role.kubernetes.io/control-plane', operator: 'Exists' }])),
      'no-placement',
    ],
    [
      'dnsPolicy None',
      reshaped(job, (j) => Object.assign(podSpec(j), { dnsPolicy: 'None', dnsConfig: { nameservers: ['10.0.0.53'] } })),
      'no-dns-overrides',
    ],
    ['a runtimeClassName', reshaped(job, (j) => (podSpec(j).runtimeClassName = 'unsandboxed')), 'no-runtime-overrides'],
    [
      '64 CPUs',
      reshaped(job, (j) => (container(j).resources = { requests: { cpu: '64', memory: '16Mi' }, limits: { cpu: '64', memory: '32Mi' } })),
      'resources',
    ],
    ['64Gi of memory, in a CronJob', reshaped(cronJob, (c) => (container(c).resources!.limits = { memory: '64Gi' })), 'resources'],
    ['no memory limit', reshaped(job, (j) => delete container(j).resources!.limits), 'resources'],
    ['parallelism 500', reshaped(job, (j) => (jobSpec(j).parallelism = 500)), 'parallelism'],
    ['parallelism 500 in a CronJob', reshaped(cronJob, (c) => (jobSpec(c).parallelism = 500)), 'parallelism'],
    ['completions 5', reshaped(cronJob, (c) => (jobSpec(c).completions = 5)), 'completions'],
    [
      'a manual selector',
      reshaped(job, (j) =>
        Object.assign(jobSpec(j), { manualSelector: true, selector: { matchLabels: jobSpec(j).template.metadata!.labels } }),
      ),
      'no-manual-selector',
    ],
    ['another image', reshaped(job, (j) => (container(j).image = 'nginx:1.27')), 'image'],
    ['a hostPath volume', reshaped(job, (j) => (podSpec(j).volumes = [{ name: 'host', hostPath: { path: '/' } }])), 'no-volumes'],
    ['a shell', reshaped(job, (j) => (container(j).command = ['sh', '-c', 'id'])), 'command'],
    ['the host network', reshaped(cronJob, (c) => (podSpec(c).hostNetwork = true)), 'no-host-namespaces'],
    ['a ServiceAccount token', reshaped(job, (j) => (podSpec(j).automountServiceAccountToken = true)), 'no-token'],
    ['another ServiceAccount', reshaped(job, (j) => (podSpec(j).serviceAccountName = install.serviceAccount)), 'service-account'],
    [
      'a postStart hook',
      reshaped(job, (j) => (container(j).lifecycle = { postStart: { exec: { command: ['sh', '-c', 'id'] } } })),
      'no-hooks',
    ],
    ['an init container', reshaped(job, (j) => (podSpec(j).initContainers = [{ ...container(j), name: 'init' }])), 'one-container'],
    ['no owner', reshaped(job, (j) => delete j.metadata!.ownerReferences), 'owner'],
    // Issue 44: what the token could still start, by amount rather than shape.
    ['concurrencyPolicy Allow', reshaped(cronJob, (c) => (c.spec.concurrencyPolicy = 'Allow')), 'concurrency'],
    ['a history of 100 successful Jobs', reshaped(cronJob, (c) => (c.spec.successfulJobsHistoryLimit = 100)), 'history-limits'],
    ['a history of 100 failed Jobs', reshaped(cronJob, (c) => (c.spec.failedJobsHistoryLimit = 100)), 'history-limits'],
    ['backoffLimit 2147483647', reshaped(job, (j) => (jobSpec(j).backoffLimit = 2147483647)), 'backoff-limit'],
    ['backoffLimit 2147483647 in a CronJob', reshaped(cronJob, (c) => (jobSpec(c).backoffLimit = 2147483647)), 'backoff-limit'],
    [
      'Indexed completion with backoffLimitPerIndex',
      reshaped(job, (j) => Object.assign(jobSpec(j), { completionMode: 'Indexed', completions: 1, backoffLimitPerIndex: 1000 })),
      'completion-mode',
    ],
    [
      'a podFailurePolicy that ignores failures',
      reshaped(job, (j) => (jobSpec(j).podFailurePolicy = { rules: [{ action: 'Ignore', onExitCodes: { operator: 'In', values: [1] } }] })),
      'completion-mode',
    ],
    ['restartPolicy OnFailure', reshaped(job, (j) => (podSpec(j).restartPolicy = 'OnFailure')), 'restart-policy'],
    ['imagePullSecrets', reshaped(job, (j) => (podSpec(j).imagePullSecrets = [{ name: 'registry' }])), 'no-pull-secrets'],
    ['fsGroup 0', reshaped(job, (j) => (podSpec(j).securityContext!.fsGroup = 0)), 'no-groups'],
    ['supplementalGroups [0], in a CronJob', reshaped(cronJob, (c) => (podSpec(c).securityContext!.supplementalGroups = [0])), 'no-groups'],
    ['a pod label of another app', reshaped(job, (j) => (jobSpec(j).template.metadata!.labels!['app'] = 'database')), 'pod-labels'],
    ['stdin and tty', reshaped(job, (j) => Object.assign(container(j), { stdin: true, tty: true })), 'no-terminal'],
    ['a finalizer, in a CronJob', reshaped(cronJob, (c) => (c.metadata!.finalizers = ['example.com/block'])), 'no-finalizers'],
    [
      'an ownerReference to an Echo of another name than its owner label, in kube-system',
      reshaped(inKubeSystem(job), (j) => (j.metadata!.ownerReferences = [{ ...j.metadata!.ownerReferences![0]!, name: 'no-such-echo' }])),
      'owner-reference',
    ],
    [
      'a second ownerReference',
      reshaped(job, (j) => j.metadata!.ownerReferences!.push({ ...cronJob.metadata!.ownerReferences![0]!, controller: false })),
      'owner-reference',
    ],
    [
      "an ownerReference that does not block its owner's deletion",
      reshaped(job, (j) => (j.metadata!.ownerReferences![0]!.blockOwnerDeletion = false)),
      'owner-reference',
    ],
    ['a Job owned by a ScheduledEcho', reshaped(job, (j) => (j.metadata!.ownerReferences = cronJob.metadata!.ownerReferences)), 'owner'],
  ];
  for (const [what, obj, rule] of refused) {
    const r = dryRun(obj);
    assert.notEqual(r.code, 0, `${what}: accepted`);
    assert.match(r.stderr, refusal(policy, rule), what);
    // The policy binds the operator's ServiceAccount only: the same object is an admin's to make.
    const admin = dryRun(obj, true);
    assert.equal(admin.code, 0, `${what} as admin: ${admin.stderr}`);
  }
  const anotherImage = refused.find(([what]) => what === 'another image')![1];
  assert.match(
    dryRun(anotherImage).stderr,
    new RegExp(`must be ${image.replace(/\./g, '\\.')} \\(the install's jobImage\\), not nginx:1\\.27`),
  );
});

test("the operator's token may update and delete only the Jobs and CronJobs its custom resources control; its own writes pass", async (t) => {
  const { install, policy, ns, job, cronJob } = await confinedInstall(t, 'confined-writes');
  const applyAsOperator = (obj: unknown) =>
    asOperator(install, ['apply', '--server-side', '--force-conflicts', `--field-manager=${FIELD_MANAGER}`, '-f', '-'], obj);
  const patchAsOperator = (o: Confined, type: 'json' | 'merge', patch: unknown) =>
    asOperator(install, ['patch', o.kind!.toLowerCase(), o.metadata!.name!, '-n', ns, `--type=${type}`, '-p', JSON.stringify(patch)]);

  // Its own CronJob: created by an apply as the operator makes it, re-applied with a change; a
  // patch of the image is refused (UPDATE sees the object as it would be stored).
  const created = applyAsOperator(cronJob);
  assert.equal(created.code, 0, created.stderr);
  const patched = patchAsOperator(cronJob, 'json', [
    { op: 'replace', path: '/spec/jobTemplate/spec/template/spec/containers/0/image', value: 'nginx:1.27' },
  ]);
  assert.notEqual(patched.code, 0);
  assert.match(patched.stderr, refusal(policy, 'image'));
  const reapplied = applyAsOperator(reshaped(cronJob, (c) => (c.spec.schedule = '@daily')));
  assert.equal(reapplied.code, 0, reapplied.stderr);
  // Nor may it add a finalizer to its own CronJob, which would block its deletion (issue 44).
  const finalized = patchAsOperator(cronJob, 'merge', { metadata: { finalizers: ['example.com/block'] } });
  assert.notEqual(finalized.code, 0, 'a finalizer was added');
  assert.match(finalized.stderr, refusal(policy, 'no-finalizers'));

  // Not the operator's: a suspended Job and CronJob an admin made (no pod runs), of the operator's
  // shape but without its owner.
  const unowned = <T extends Confined>(o: T): T =>
    reshaped(o, (c) => {
      c.metadata!.name = `not-ours-${o.kind!.toLowerCase()}`;
      delete c.metadata!.ownerReferences;
      c.spec!.suspend = true;
    });
  const [theirJob, theirCronJob] = [unowned(job), unowned(cronJob)];
  kubectlOk(['create', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [theirJob, theirCronJob] }) });
  for (const o of [theirJob, theirCronJob]) {
    const r = asOperator(install, ['delete', o.kind!.toLowerCase(), o.metadata!.name!, '-n', ns, '--wait=false']);
    assert.notEqual(r.code, 0, `${o.kind} deleted`);
    assert.match(r.stderr, refusal(policy, 'owned-before'), o.kind);
  }
  // Nor can the token take one over first (make it its shape, owned by a ScheduledEcho) and then delete it.
  const takeOver = patchAsOperator(theirCronJob, 'merge', { metadata: { ownerReferences: cronJob.metadata!.ownerReferences } });
  assert.notEqual(takeOver.code, 0, 'took the CronJob over');
  assert.match(takeOver.stderr, refusal(policy, 'owned-before'));
  for (const o of [theirJob, theirCronJob]) {
    assert.equal(kubectl(['get', o.kind!.toLowerCase(), o.metadata!.name!, '-n', ns]).code, 0, `${o.kind} still there`);
  }

  // Its own: a Job it creates, and the CronJob above, it may delete.
  const ownJob = asOperator(
    install,
    ['create', '-f', '-'],
    reshaped(job, (j) => (j.spec!.suspend = true)),
  );
  assert.equal(ownJob.code, 0, ownJob.stderr);
  for (const o of [job, cronJob]) {
    const r = asOperator(install, ['delete', o.kind!.toLowerCase(), o.metadata!.name!, '-n', ns, '--wait=false']);
    assert.equal(r.code, 0, `${o.kind}: ${r.stderr}`);
  }
});
