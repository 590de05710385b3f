/**
 * The message escaped for the kubelet's expansion of a container's command: checked against a
 * port of the kubelet's rule (Kubernetes' third_party/forked/golang/expansion, Expand with
 * MappingFuncFor, as ExpandContainerCommandAndArgs applies it), itself checked against cases of
 * Kubernetes' own expand_test.go. The port lives here only: the operator never expands, it escapes.
 * The node tier (test/e2e/node-messages-property.test.ts) checks the same on the real kubelet.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import { ECHOS, type Echo } from '../../src/api/echo.js';
import { SCHEDULED_ECHOS, type ScheduledEcho } from '../../src/api/scheduledecho.js';
import { escapeKubeletExpansion } from '../../src/controllers/common/kubeletescape.js';
import { ECHO_COMMAND_PREFIX, echoCommand, echoPodTemplate } from '../../src/controllers/common/pod.js';
import { jobNameFor } from '../../src/controllers/echo/desired.js';
import { runnableControllers } from '../../src/controllers/index.js';
import { CRONJOBS, JOBS } from '../../src/kube/resources.js';
import { nopLogger } from '../../src/runtime/log.js';
import { fakeManagerParts, FakeClient } from '../../src/runtime/testing/index.js';
import { testSettings } from '../support/manager.js';
import { ISSUE_MESSAGE, KUBELET_DEFINED_VARIABLES, longestMessages, messageArbitrary } from '../support/messages.js';

/** Fixed, so a failure is reproduced by the same run; fast-check prints it with the counterexample. */
const SEED = 32_001;

/**
 * Expand(input, MappingFuncFor(env)), ported: a `$` followed by `$` is one `$`; by `(NAME)`, the
 * value of NAME when env defines it, else `$(NAME)` as written; by anything else (or nothing), the
 * `$` as is. `$`, `(` and `)` are ASCII, so scanning UTF-16 code units finds what scanning UTF-8
 * bytes finds, and copies the rest unchanged.
 */
function kubeletExpand(input: string, env: Record<string, string>): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const next = input[cursor + 1];
    const close = next === '(' ? input.indexOf(')', cursor + 2) : -1;
    if (next === '$') {
      out += '$';
      cursor += 1;
    } else if (close !== -1) {
      const name = input.slice(cursor + 2, close);
      out += Object.hasOwn(env, name) ? env[name] : `$(${name})`;
      cursor = close;
    } else {
      // Not a reference (`$x`, or `$(` never closed): the `$` alone; the scan resumes after it.
      out += '$';
    }
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

/** A node's environment for the kubelet: the variables it always defines, plus those of the pod spec. */
const NODE_ENV: Record<string, string> = {
  KUBERNETES_SERVICE_HOST: '10.0.0.1',
  KUBERNETES_SERVICE_PORT: '443',
  KUBERNETES_PORT: 'tcp://10.0.0.1:443',
};

const envArbitrary = fc.dictionary(
  fc.oneof(fc.constantFrom('VAR', 'HOME', 'PATH', ...KUBELET_DEFINED_VARIABLES), fc.string({ maxLength: 8 })),
  fc.string({ unit: 'binary', maxLength: 12 }),
);

describe('the port of the kubelet expansion', () => {
  it("gives what Kubernetes' own expand_test.go expects", () => {
    const env = { VAR_A: 'A', VAR_B: 'B', VAR_C: 'C', VAR_REF: '$(VAR_A)', VAR_EMPTY: '' };
    const cases: [string, string][] = [
      ['$(VAR_A)-$(VAR_A)', 'A-A'],
      ['___$(VAR_B)___', '___B___'],
      ['$$(VAR_B)_$(VAR_A)', '$(VAR_B)_A'],
      ['f000-$$VAR_A', 'f000-$VAR_A'],
      ['foo\\$(VAR_C)bar', 'foo\\Cbar'],
      ['$(VAR_A$(VAR_B))', '$(VAR_A$(VAR_B))'],
      ['$(VAR_A$(VAR_B)', '$(VAR_A$(VAR_B)'],
      ['$(VAR_REF)', '$(VAR_A)'],
      ['foo$(VAR_EMPTY)bar', 'foobar'],
      ['foo$(VAR_Awhoops!', 'foo$(VAR_Awhoops!'],
      ['$?_boo_$!', '$?_boo_$!'],
      ['$(VAR_DNE)', '$(VAR_DNE)'],
      ['$$$$$$(BIG_MONEY)', '$$$(BIG_MONEY)'],
      ['$$$$$$$(GOOD_ODDS)', '$$$$(GOOD_ODDS)'],
      ['$$$$$$$(VAR_A)', '$$$A'],
      ['${VAR_A}', '${VAR_A}'],
      ['$(VAR_C)_______$(', 'C_______$('],
      ['$(VAR_A)foobarzab$', 'Afoobarzab$'],
      ['--$($($($($--', '--$($($($($--'],
      ['$(foo$$var)', '$(foo$$var)'],
      ['$中文', '$中文'],
      ['prefix-$€-suffix', 'prefix-$€-suffix'],
    ];
    for (const [input, expected] of cases) assert.equal(kubeletExpand(input, env), expected, input);
  });

  it('reproduces issue 32: the message as written loses a $ and prints the service host', () => {
    assert.equal(kubeletExpand(ISSUE_MESSAGE, NODE_ENV), 'Total: $5 host=10.0.0.1');
  });
});

describe('escapeKubeletExpansion', () => {
  it('makes issue 32 print as written', () => {
    assert.equal(escapeKubeletExpansion(ISSUE_MESSAGE), 'Total: $$$$5 host=$$(KUBERNETES_SERVICE_HOST)');
    assert.equal(kubeletExpand(escapeKubeletExpansion(ISSUE_MESSAGE), NODE_ENV), ISSUE_MESSAGE);
  });

  it('round-trips every message the CRD admits through the kubelet expansion, whatever the environment', () => {
    const roundTrips = (escape: (m: string) => string) =>
      fc.property(messageArbitrary, envArbitrary, (message, env) => kubeletExpand(escape(message), { ...NODE_ENV, ...env }) === message);
    fc.assert(roundTrips(escapeKubeletExpansion), { seed: SEED, numRuns: 2_000 });
    for (const message of longestMessages()) assert.equal(kubeletExpand(escapeKubeletExpansion(message), NODE_ENV), message);
    // The property has teeth: without the escaping, the same generator finds a changed message.
    assert.equal(
      fc.check(
        roundTrips((m) => m),
        { seed: SEED, numRuns: 2_000 },
      ).failed,
      true,
    );
  });

  it('leaves a message without $ unchanged (what earlier versions wrote for it stays as it is)', () => {
    const withoutDollar = messageArbitrary.map((m) => m.replaceAll('$', 'S'));
    fc.assert(
      fc.property(withoutDollar, (message) => escapeKubeletExpansion(message) === message),
      { seed: SEED, numRuns: 500 },
    );
  });
});

describe('the pod prints the escaped message', () => {
  it("runs printf '%s\\n' with the message escaped, as the admission policy's prefix expects", () => {
    assert.deepEqual(echoCommand(ISSUE_MESSAGE), [...ECHO_COMMAND_PREFIX, escapeKubeletExpansion(ISSUE_MESSAGE)]);
    const container = echoPodTemplate(ISSUE_MESSAGE, 'busybox', {}).spec!.containers[0]!;
    assert.deepEqual(container.command, ['printf', '%s\\n', 'Total: $$$$5 host=$$(KUBERNETES_SERVICE_HOST)']);
    assert.equal(container.args, undefined);
  });
});

interface Fixture {
  recorded: { jobImage: string };
  echos: Echo[];
  scheduledEchos: ScheduledEcho[];
  jobs: V1Job[];
  cronJobs: V1CronJob[];
}

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'upgrade');

/**
 * The upgrade of a cluster where the previous version ran messages with a `$`: a recorded fixture
 * (test/unit/upgrade.test.ts keeps the no-write promise for messages without one), its Ready
 * ScheduledEcho and succeeded Echo given such a message, with the command that version wrote for it.
 */
describe('upgrading objects whose message holds a $', () => {
  const fixture = JSON.parse(
    readFileSync(
      join(
        FIXTURES,
        readdirSync(FIXTURES).find((f) => f.endsWith('.json'))!,
      ),
      'utf8',
    ),
  ) as Fixture;
  const message = `${ISSUE_MESSAGE} (recorded)`;
  const previousCommand = [...ECHO_COMMAND_PREFIX, message];

  async function reconcileTwice(client: FakeClient, kind: string, key: string): Promise<string[]> {
    const controller = runnableControllers({ ...testSettings(), jobImage: fixture.recorded.jobImage }).find((c) => c.name === kind)!;
    const manager = fakeManagerParts(controller, client);
    manager.sync();
    const reconciler = controller.reconciler(manager.parts);
    const ctx = { log: nopLogger, signal: new AbortController().signal, reconcileID: 'upgrade' };
    for (let pass = 0; pass < 2; pass++) {
      await reconciler.reconcile(key, ctx);
      manager.sync();
    }
    return client.writes.map((w) => `${w.verb} ${w.type.resource} ${w.key}`);
  }

  it("re-applies a ScheduledEcho's CronJob once, with the escaped command; a second pass writes nothing", async () => {
    const se = structuredClone(fixture.scheduledEchos.find((s) => s.metadata.name === 'madrid')!);
    se.spec.message = message;
    const cronJob = structuredClone(fixture.cronJobs.find((c) => c.metadata?.uid && c.metadata.name === 'madrid')!);
    cronJob.spec.jobTemplate.spec!.template.spec!.containers[0]!.command = previousCommand;
    const client = new FakeClient();
    client.add(SCHEDULED_ECHOS, se);
    client.add(CRONJOBS, cronJob);
    const key = `${se.metadata.namespace}/${se.metadata.name}`;
    assert.deepEqual(await reconcileTwice(client, 'scheduledecho', key), [`apply cronjobs ${key}`]);
    const written = client.stored(CRONJOBS, key)!;
    assert.deepEqual(written.spec.jobTemplate.spec!.template.spec!.containers[0]!.command, echoCommand(message));
    assert.equal(client.all(JOBS).length, 0, 'no Job: the next run is the schedule’s');
  });

  it("leaves a succeeded Echo's Job as the previous version wrote it: no write, no new run", async () => {
    const recorded = fixture.echos.find((e) => e.status?.phase === 'Succeeded')!;
    const recordedJobName = recorded.status!.jobName!;
    // The Job of that message under the previous version: its name derives from the message, and
    // the Echo's status (phase, conditions) names it.
    const jobName = jobNameFor({ ...recorded, spec: { ...recorded.spec, message } });
    const renamed = <T>(obj: T): T => JSON.parse(JSON.stringify(obj).replaceAll(recordedJobName, jobName)) as T;
    const echo = renamed(recorded);
    echo.spec.message = message;
    const job = renamed(fixture.jobs.find((j) => j.metadata?.name === recordedJobName)!);
    job.spec!.template.spec!.containers[0]!.command = previousCommand;
    const client = new FakeClient();
    client.add(ECHOS, echo);
    client.add(JOBS, job);
    const key = `${echo.metadata.namespace}/${echo.metadata.name}`;
    assert.deepEqual(await reconcileTwice(client, 'echo', key), []);
    assert.deepEqual(
      client.stored(JOBS, `${echo.metadata.namespace}/${jobName}`)!.spec!.template.spec!.containers[0]!.command,
      previousCommand,
    );
  });
});
