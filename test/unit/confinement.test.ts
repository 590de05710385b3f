/**
 * The confinement policy's construction (infra/confinement.ts, infra/confinement-rules.ts) and its
 * install value jobMaxResources: every rule named and guarded by the operation it reads, the
 * maximum resources taken from the install and checked against what the operator's Jobs use.
 * Whether the API server refuses what each rule is about is test/e2e/confinement.test.ts's.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import type { V1ValidatingAdmissionPolicy } from '@kubernetes/client-node';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { synthesize } from '../../infra/chart.js';
import { pinnedFields } from '../../infra/confinement.js';
import { present } from '../../infra/confinement-rules.js';
import { EchoperatorPropsError, type EchoperatorProps } from '../../infra/echoperator.js';
import { VALUES_SCHEMA_FILE } from '../../infra/values-schema.js';
import { parseValues, ValuesError } from '../../infra/values.js';
import { manifestsOf } from '../support/manifests.js';

function policy(props: EchoperatorProps = {}): V1ValidatingAdmissionPolicy {
  const [p] = manifestsOf<V1ValidatingAdmissionPolicy>(synthesize(props).objects, 'ValidatingAdmissionPolicy');
  return p!;
}

describe('the confinement rules', () => {
  const validations = policy().spec!.validations!;
  const names = validations.map((v) => /^\[([a-z-]+)\] /.exec(v.message!)?.[1]);

  it('each has a message starting with its own name', () => {
    assert.ok(
      names.every((n) => n !== undefined),
      JSON.stringify(validations.map((v) => v.message)),
    );
    assert.equal(new Set(names).size, names.length, 'two rules share a name');
    assert.ok(names.length >= 25, `${names.length} rules`);
  });

  it('read `object` only on CREATE and UPDATE and `oldObject` only on UPDATE and DELETE', () => {
    for (const v of validations) {
      // A rule about the new object may compare it with the stored one, checking that one exists.
      const readsNew = /(?<!old)\bobject\./.test(v.expression);
      if (readsNew && /\boldObject\./.test(v.expression)) assert.match(v.expression, /oldObject != null && /, v.message);
      const reads = /\boldObject\b/.test(v.expression) && !readsNew ? 'oldObject' : 'object';
      const guard = reads === 'oldObject' ? 'request.operation == "CREATE" || (' : 'request.operation == "DELETE" || (';
      assert.ok(v.expression.startsWith(guard), `${v.message}: ${v.expression}`);
      const body = v.expression.slice(guard.length);
      if (reads === 'oldObject') assert.doesNotMatch(body, /(?<!old)\bobject\b|variables\.(pod|job)\b/, v.message);
    }
    // Every operation is matched, so DELETE reaches the ownership rule.
    for (const r of policy().spec!.matchConstraints!.resourceRules!) assert.deepEqual(r.operations, ['CREATE', 'UPDATE', 'DELETE']);
  });

  it('never read a nested field without has() on it and its parents', () => {
    assert.equal(present('c', 'a'), 'has(c.a)');
    assert.equal(present('c', 'a.b.c'), '(has(c.a) && has(c.a.b) && has(c.a.b.c))');
  });

  it('refuse env, ports, placement, priority and more than one pod, and require the restricted fields', () => {
    const byName = new Map(validations.map((v, i) => [names[i]!, v.expression]));
    const expect: [string, RegExp][] = [
      ['no-env', /c\.envFrom/],
      ['no-ports', /c\.ports/],
      ['non-root', /runAsNonRoot == true.*runAsUser == 0/],
      ['no-privilege-escalation', /allowPrivilegeEscalation == false/],
      ['seccomp', /seccompProfile\.type == 'RuntimeDefault'/],
      ['capabilities', /drop\.exists\(d, d == 'ALL'\)/],
      ['no-node-name', /nodeName/],
      ['no-priority', /priorityClassName/],
      ['no-host-aliases', /hostAliases/],
      ['resources', /quantity\(/],
      ['parallelism', /variables\.job\.parallelism == 1/],
      ['completions', /variables\.job\.completions == 1/],
      ['owned-before', /oldObject\.metadata\.ownerReferences/],
      ['backoff-limit', /variables\.job\.backoffLimit == 3\)/],
      ['restart-policy', /variables\.pod\.restartPolicy == "Never"/],
      ['concurrency', /object\.spec\.concurrencyPolicy == "Forbid"/],
      ['history-limits', /successfulJobsHistoryLimit == 3.*failedJobsHistoryLimit == 1.*startingDeadlineSeconds == 300/],
      ['completion-mode', /completionMode == 'NonIndexed'.*backoffLimitPerIndex.*podFailurePolicy/],
      ['no-pull-secrets', /imagePullSecrets/],
      ['no-groups', /fsGroup.*supplementalGroups/],
      ['no-terminal', /c\.stdin == true.*c\.tty == true/],
      ['pod-labels', /"app\.kubernetes\.io\/managed-by".*== "echoperator"/],
      ['no-finalizers', /f in oldObject\.metadata\.finalizers/],
      ['owner-reference', /size\(object\.metadata\.ownerReferences\) == 1.*blockOwnerDeletion == true.*variables\.ownerApiVersion/],
    ];
    for (const [name, pattern] of expect) assert.match(byName.get(name) ?? '', pattern, name);
  });
});

describe('the fields the confinement pins', () => {
  it("are the values the operator's Jobs and CronJobs carry, read from its desired objects", () => {
    const pinned = pinnedFields('busybox:1.37');
    assert.deepEqual(pinned.cronJob, {
      concurrencyPolicy: 'Forbid',
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
      startingDeadlineSeconds: 300,
    });
    assert.equal(pinned.backoffLimit, 3);
    assert.equal(pinned.restartPolicy, 'Never');
    assert.deepEqual(pinned.podLabelKeys, [
      'app.kubernetes.io/component',
      'app.kubernetes.io/managed-by',
      'app.kubernetes.io/name',
      'batch.kubernetes.io/controller-uid',
      'batch.kubernetes.io/job-name',
      'controller-uid',
      'job-name',
      'mmontes.io/echo',
      'mmontes.io/scheduledecho',
    ]);
  });

  it('tie an ownerReference to the owner kind of the request, by API version and owner label', () => {
    const variables = new Map(policy().spec!.variables!.map((v) => [v.name, v.expression]));
    assert.equal(
      variables.get('ownerApiVersion'),
      '{"jobs": "mmontes.io/v1alpha1", "cronjobs": "mmontes.io/v1alpha1"}[request.resource.resource]',
    );
    assert.equal(
      variables.get('ownerLabel'),
      '{"jobs": "mmontes.io/echo", "cronjobs": "mmontes.io/scheduledecho"}[request.resource.resource]',
    );
  });
});

describe('jobMaxResources', () => {
  const maxResources = (props: EchoperatorProps = {}) => policy(props).spec!.variables!.find((v) => v.name === 'maxResources')!.expression;

  it('defaults to 100m cpu and 64Mi memory, and the install value replaces each', () => {
    assert.equal(maxResources(), '{"cpu": quantity("100m"), "memory": quantity("64Mi")}');
    assert.equal(maxResources(parseValues('jobMaxResources: {memory: 1Gi}\n')), '{"cpu": quantity("100m"), "memory": quantity("1Gi")}');
    assert.equal(maxResources({ jobMaxResources: { cpu: '2' } }), '{"cpu": quantity("2"), "memory": quantity("64Mi")}');
    assert.match(policy().spec!.validations!.find((v) => v.message!.startsWith('[resources]'))!.message!, /cpu 100m and memory 64Mi/);
  });

  it('is a quantity, or values.yaml is refused naming the key, by the synth and by values.schema.json alike', () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(JSON.parse(readFileSync(VALUES_SCHEMA_FILE, 'utf8')) as object);
    for (const good of ['jobMaxResources: {cpu: 250m, memory: 128Mi}\n', 'jobMaxResources: {cpu: "1"}\n']) {
      assert.ok(validate(parse(good)), `ajv refuses ${good}: ${JSON.stringify(validate.errors)}`);
      assert.doesNotThrow(() => parseValues(good), good);
    }
    for (const bad of ['jobMaxResources: {cpu: lots}\n', 'jobMaxResources: {memory: 64 Mi}\n', 'jobMaxResources: {gpu: "1"}\n']) {
      assert.equal(validate(parse(bad)), false, `ajv accepts ${bad}`);
      assert.throws(() => parseValues(bad), ValuesError, `the synth accepts ${bad}`);
    }
    assert.throws(
      () => parseValues('jobMaxResources: {cpu: lots}\n'),
      (err: Error) => err instanceof ValuesError && /jobMaxResources\.cpu: must be a Kubernetes quantity .*got "lots"/.test(err.message),
    );
    assert.throws(() => parseValues('jobMaxResources: {gpu: 1}\n'), /unknown key jobMaxResources\.gpu/);
  });

  it("must cover what the operator's own Jobs request and are limited to", () => {
    assert.throws(
      () => synthesize({ jobMaxResources: { memory: '24Mi' } }),
      (err: Error) => err instanceof EchoperatorPropsError && /jobMaxResources\.memory must be at least 32Mi.*got 24Mi/.test(err.message),
    );
    assert.throws(() => synthesize({ jobMaxResources: { cpu: '5m' } }), /jobMaxResources\.cpu must be at least 10m/);
    assert.throws(() => synthesize({ jobMaxResources: { cpu: 'x' } }), /jobMaxResources\.cpu must be a Kubernetes quantity/);
    assert.doesNotThrow(() => synthesize({ jobMaxResources: { cpu: '10m', memory: '32Mi' } }));
  });
});
