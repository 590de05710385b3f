/**
 * Faults that come from other clients (issue 7): another client editing Echos in a tight loop
 * while the operator reconciles them, resources the server must refuse, and odd but valid ones
 * that must reach the Job literally. On the shared control plane, each test in its own namespace.
 * (install.test.ts already checks the CRDs' main rejections; only cases it lacks are here.)
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import { jobNameFor } from '../../src/controllers/echo/desired.js';
import { resourcePath } from '../../src/kube/index.js';
import type { Echo } from '../../src/api/echo.js';
import { ECHOS } from '../../src/api/echo.js';
import { JOBS } from '../../src/kube/resources.js';
import { conditionOf, eventually, kubeconfig, kubectl, kubectlOk, listItems, testNamespace } from '../support/kube.js';
import { installCrds, operatorIn } from '../support/operator.js';
import {
  controllerWork,
  kubeletEscaped,
  liveJobsByOwner,
  logEntries,
  messageOf,
  metricValue,
  pool,
  restClient,
  restItems,
} from '../support/faults.js';
import { getEcho } from '../support/runs.js';

const ECHOS_EDITED = 50;
const EDITS = 5;

test(
  `${ECHOS_EDITED} Echos edited ${EDITS} times each by another client while reconciling: statuses converge, one Job each, no error loop`,
  { timeout: 180_000 },
  async (t) => {
    const { ns, op } = await operatorIn(t, 'edits', { LOG_LEVEL: 'info' });
    const rest = restClient(t, kubeconfig());
    const names = Array.from({ length: ECHOS_EDITED }, (_, i) => `e${String(i).padStart(2, '0')}`);
    const path = (name?: string) => resourcePath(ECHOS, ns, name);
    await pool(names, 8, (name) =>
      rest.request('POST', path(), {
        body: { apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', metadata: { name }, spec: { message: `${name} v0` } },
      }),
    );
    // The other client, as fast as it can: message changes (new runs) interleaved with label-only
    // changes (no new generation), all Echos at once, no pause between rounds.
    const finalMessage = new Map(names.map((n) => [n, `${n} v0`]));
    for (let round = 1; round <= EDITS; round++) {
      const changeMessage = round !== 2 && round !== 4;
      await pool(names, 10, (name) => {
        const message = changeMessage ? `${name} v${round} — ${'$(x)'.repeat(round)}` : undefined;
        if (message) finalMessage.set(name, message);
        return rest.request('PATCH', path(name), {
          body: { metadata: { labels: { round: String(round) } }, ...(message ? { spec: { message } } : {}) },
          contentType: 'application/merge-patch+json',
        });
      });
    }

    const editedAt = Date.now();
    let last = '';
    await eventually(
      'every Echo to settle on the Job of its final message',
      async () => {
        const echos = await restItems<Echo>(rest, path());
        const byOwner = liveJobsByOwner(await restItems<V1Job>(rest, resourcePath(JOBS, ns)));
        const wrong = echos.filter((e) => {
          const own = byOwner.get(e.metadata.uid!) ?? [];
          return !(
            e.spec.message === finalMessage.get(e.metadata.name!) &&
            own.length === 1 &&
            own[0]!.metadata!.name === jobNameFor(e) &&
            messageOf(own[0]!) === e.spec.message &&
            e.status?.jobName === own[0]!.metadata!.name &&
            e.status?.observedGeneration === e.metadata.generation
          );
        });
        last = wrong
          .slice(0, 3)
          .map(
            (e) =>
              `${e.metadata.name}: ${JSON.stringify({ gen: e.metadata.generation, status: e.status?.jobName, observed: e.status?.observedGeneration, jobs: (byOwner.get(e.metadata.uid!) ?? []).map((j) => j.metadata!.name) })}`,
          )
          .join('; ');
        return echos.length === ECHOS_EDITED && wrong.length === 0;
      },
      90_000,
      1000,
    ).catch((err) => assert.fail(`${String(err)}; still wrong: ${last}`));
    t.diagnostic(`converged ${Date.now() - editedAt} ms after the last edit`);
    const echos = await restItems<Echo>(rest, path());
    assert.ok(
      echos.every((e) => e.metadata.labels!.round === String(EDITS)),
      'the label edits stuck',
    );
    assert.ok(
      echos.every((e) => e.metadata.generation === 1 + EDITS - 2),
      'label-only edits made no generation',
    );

    // No error loop. Status writes are conditional on the resourceVersion the cache had, so an edit
    // landing in between makes the write conflict (409): an ordinary error, retried with the key's
    // backoff as controller-runtime does (issue 13), but never more than about one per Echo, and
    // no failure condition or Event for it. Other errors stay rare, all stop with the edits, and
    // no error repeats in the log. "Stop": the queue drains, with no key waiting out a retry's
    // backoff, so no reconcile is left to fail; an error loop keeps a key delayed and never drains.
    const metric = (name: string, labels: Record<string, string>) =>
      metricValue(op, name, { controller: 'echo', ...labels }).then((v) => v ?? NaN);
    const errors = await metric('controller_runtime_reconcile_errors_total', {});
    await eventually(
      'the echo queue to drain: nothing queued, in flight or waiting to be retried',
      async () => {
        const work = await controllerWork(op, 'echo');
        return work.idle && work.delayed === 0;
      },
      60_000,
    );
    const errorsLater = await metric('controller_runtime_reconcile_errors_total', {});
    const logs = await logEntries(op);
    const failed = logs.filter((e) => e.level === 'error' || e.level === 'warn');
    t.diagnostic(`reconcile errors: ${errors}; successes: ${await metric('controller_runtime_reconcile_total', { result: 'success' })}`);
    const conflict = /the object has been modified/;
    const otherErrors = failed.filter((e) => e.level === 'error' && !conflict.test(String(e.error)));
    assert.ok(errors <= ECHOS_EDITED, `reconcile errors (conflicts included) bounded: ${errors}`);
    assert.ok(
      otherErrors.length <= ECHOS_EDITED / 10,
      `errors other than conflicts stay rare: ${JSON.stringify(otherErrors).slice(0, 2000)}`,
    );
    assert.equal(errorsLater, errors, 'no reconcile errors once the edits stopped');
    const repeated = new Map<string, number>();
    for (const f of failed)
      repeated.set(`${f.msg} ${f.name ?? ''} ${f.error ?? ''}`, (repeated.get(`${f.msg} ${f.name ?? ''} ${f.error ?? ''}`) ?? 0) + 1);
    assert.ok(
      [...repeated.values()].every((n) => n <= 2),
      `no repeating error in the log: ${JSON.stringify([...repeated])}`,
    );
    assert.ok(
      echos.every((e) => conditionOf(e, 'Reconciled')?.status === 'True'),
      'every Echo ends Reconciled',
    );
    assert.equal(
      logs.filter((e) => e.msg === 'job created').length,
      new Set(logs.filter((e) => e.msg === 'job created').map((e) => e.job)).size,
      'no Job created twice',
    );
  },
);

test('the server refuses malformed Echos and ScheduledEchos that install.test.ts does not cover', (t) => {
  installCrds();
  const ns = testNamespace(t, 'refused');
  const cases: [string, 'Echo' | 'ScheduledEcho', Record<string, unknown>, RegExp][] = [
    ['no spec', 'Echo', {}, /spec: Required value/],
    ['spec not an object', 'Echo', { spec: 'hello' }, /spec: Invalid value: "string": spec in body must be of type object/],
    ['message null', 'Echo', { spec: { message: null } }, /spec\.message: (Required value|Invalid value)/],
    // Where a CEL rule refuses a value, Kubernetes up to 1.36 writes its type ("string"), 1.37 the value.
    [
      'message with a NUL character',
      'Echo',
      { spec: { message: 'before\u0000after' } },
      /spec\.message: Invalid value: "(string|[^"]*\\x00[^"]*)": must not contain the NUL character/,
    ],
    [
      'scheduled: NUL character',
      'ScheduledEcho',
      { spec: { message: '\u0000', schedule: '@daily' } },
      /spec\.message: Invalid value: "(string|[^"]*\\x00[^"]*)": must not contain the NUL character/,
    ],
    [
      'six-field schedule (seconds)',
      'ScheduledEcho',
      { spec: { message: 'hi', schedule: '0 */1 * * * *' } },
      /spec\.schedule: Invalid value/,
    ],
    ['empty schedule', 'ScheduledEcho', { spec: { message: 'hi', schedule: '' } }, /spec\.schedule: Invalid value/],
    [
      'unknown predefined schedule',
      'ScheduledEcho',
      { spec: { message: 'hi', schedule: '@fortnightly' } },
      /spec\.schedule: Invalid value/,
    ],
  ];
  for (const [what, kind, body, expected] of cases) {
    const r = kubectl(['create', '-f', '-'], {
      namespace: ns,
      input: JSON.stringify({ apiVersion: 'mmontes.io/v1alpha1', kind, metadata: { name: 'bad' }, ...body }),
    });
    assert.notEqual(r.code, 0, `${what}: accepted`);
    assert.match(r.stderr, expected, `${what}: ${r.stderr}`);
  }
  assert.equal(kubectl(['get', 'echos,scheduledechos', '-o', 'name'], { namespace: ns }).stdout.trim(), '', 'nothing was stored');
});

test(
  'odd but valid messages reach the Job and the CronJob literally: metacharacters, non-ASCII, 4096 characters',
  { timeout: 120_000 },
  async (t) => {
    const { ns, op } = await operatorIn(t, 'odd', { LOG_LEVEL: 'info' });
    const metachars = `$(reboot) \`id\` $HOME \${PATH} ; | & && || > /etc/x < /dev/zero 2>&1 * ? [a-z] ~ ! # 'single' "double" \\ \\n %s %d %% %n\t`;
    const odd: Record<string, string> = {
      'max-ascii': metachars.repeat(Math.ceil(4096 / metachars.length)).slice(0, 4096),
      // 4096 characters beyond the BMP: 8192 UTF-16 units, 16 KiB of UTF-8; the limit counts characters.
      'max-astral': '👋'.repeat(4096),
      'max-mixed': ('Grüße, 世界! ' + 'مرحبا ' + 'e\u0301 ').repeat(300).slice(0, 4096),
      'flag-like': '-n',
      'double-dash': '--help',
      'printf-format': '%s%s%s %b \\c \\x41',
      whitespace: '  leading and trailing  \n\ttab\r\nCRLF \u00a0nbsp ',
      invisible: '\ufeff\u200b\u200d\u202e reversed',
      one: 'x',
    };
    for (const [name, message] of Object.entries(odd)) {
      assert.ok([...message].length <= 4096, `${name} fits`);
      kubectlOk(['create', '-f', '-'], {
        namespace: ns,
        input: JSON.stringify({ apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', metadata: { name }, spec: { message } }),
      });
    }
    kubectlOk(['create', '-f', '-'], {
      namespace: ns,
      input: JSON.stringify({
        apiVersion: 'mmontes.io/v1alpha1',
        kind: 'ScheduledEcho',
        metadata: { name: 'odd-schedule' },
        spec: { message: odd['max-ascii'], schedule: '*/5 * * * *' },
      }),
    });

    for (const [name, message] of Object.entries(odd)) {
      const echo = getEcho(ns, name);
      assert.equal(echo.spec.message, message, `${name}: the server kept the message as sent`);
      const job = await eventually(
        `${name}: its Job`,
        () => listItems<V1Job>(['get', 'jobs', '-l', `mmontes.io/echo=${name}`], { namespace: ns })[0],
      );
      assert.deepEqual(
        job.spec!.template.spec!.containers[0]!.command,
        ['printf', '%s\\n', kubeletEscaped(message)],
        `${name}: printed literally, no shell`,
      );
      assert.equal(job.metadata!.name, jobNameFor(echo));
      const status = await eventually(`${name}: its status`, () =>
        getEcho(ns, name).status?.jobName ? getEcho(ns, name).status : undefined,
      );
      assert.equal(status.jobName, job.metadata!.name);
      assert.equal(status.conditions!.find((c) => c.type === 'Reconciled')?.status, 'True');
    }
    const cronJob = await eventually(
      'the CronJob',
      () => listItems<V1CronJob>(['get', 'cronjobs', '-l', 'mmontes.io/scheduledecho=odd-schedule'], { namespace: ns })[0],
    );
    assert.deepEqual(cronJob.spec.jobTemplate.spec!.template.spec!.containers[0]!.command, [
      'printf',
      '%s\\n',
      kubeletEscaped(odd['max-ascii']!),
    ]);
    const failed = (await logEntries(op)).filter((e) => e.level === 'error' || e.level === 'warn');
    const errors = await metricValue(op, 'controller_runtime_reconcile_errors_total', { controller: 'echo' });
    assert.equal(errors, 0, `no reconcile failed: ${errors}: ${JSON.stringify(failed).slice(0, 3000)}`);
  },
);
