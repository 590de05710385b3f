/**
 * Runs on the real node, property-based: hundreds of generated messages (test/support/messages.ts:
 * the kubelet's `$`, `$$` and `$(VAR)`, printf's directives, quotes, backslashes, backticks,
 * multi-byte and combining Unicode, the longest message the CRD admits, issue 32's literal) are
 * each printed by an Echo's Job on the node and read back from the pod's log (what `kubectl logs`
 * reads, through the kubelet) as raw bytes: each must be exactly the message's UTF-8 and printf's
 * one newline. A ScheduledEcho is made for each of the same messages: its CronJob's container must
 * equal the Echo Job's (SCHEDULED_RUNS says why), and a sample of them print on the node too.
 *
 * A ScheduledEcho's runs are started at once with a Job made from its CronJob, as `kubectl create
 * job --from=cronjob/NAME` makes it: the bytes under test are the CronJob's template, which the
 * operator wrote; node-scheduledecho.test.ts shows a CronJob firing on its own schedule.
 *
 * The generator's seed is fixed and printed with any failure, so a failure is reproduced by the
 * same run. Needs the node (ECHOPERATOR_NODE, on by default).
 */
import assert from 'node:assert/strict';
import { test, type TestContext } from 'node:test';
import fc from 'fast-check';
import type { V1Container, V1CronJob, V1Job } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import { ECHO_LABEL } from '../../src/controllers/echo/desired.js';
import { SCHEDULED_ECHO_LABEL } from '../../src/controllers/scheduledecho/desired.js';
import { eventually, kubectlOk, listItems, testNamespace } from '../support/kube.js';
import { ISSUE_MESSAGE, longestMessages, messageArbitrary } from '../support/messages.js';
import { podLogReader } from '../support/podlogs.js';
import { runAll, type RunOutput } from '../support/podruns.js';
import { operatorFor } from '../support/runs.js';

const SEED = 32_001;
/** Generated messages per kind, beyond the fixed ones (issue 32's, the longest). */
const GENERATED = 200;
/**
 * Runs on the node at once: well under its 110 pods, which other tests share, and few enough that
 * the sandboxes being set up at once do not starve the tests running beside this one on two cores.
 */
const WINDOW = 16;
/**
 * Generated messages a ScheduledEcho's CronJob also prints on the node. Every ScheduledEcho gets
 * one of the Echos' messages, and each CronJob's container must equal, field for field, the
 * container of the Echo's Job that printed the same message exactly: what the node prints is a
 * function of that container (image, command, args, env), so the runs here sample the CronJob path
 * end to end rather than repeat the 200 pods (several minutes on two cores).
 */
const SCHEDULED_RUNS = 20;
/**
 * A deadline, not an expectation: each run is a pod (sandbox and container) on a two-core node
 * shared with other tests; measured on a loaded machine (load average 60), about 8 runs a minute.
 */
const RUNS_TIMEOUT_MS = 1_800_000;
/** Never fires during the test (next on January 1st): its runs are the ones the test starts. */
const NOT_DURING_THE_TEST = '0 0 1 1 *';

/**
 * What a pod's log can show: containerd's CRI logger ends a log record at "\n" and drops a "\r"
 * just before it (pkg/cri/io/logger.go, readLine), so "\r\n" in a pod's output reads back as
 * "\n" whatever the pod printed. Messages with a "\r" before a newline, or last (before printf's),
 * are left to the unit tests of the escaping.
 */
const readableFromLog = (message: string): boolean => !/\r(\n|$)/.test(message);

/** Issue 32's literal and the longest messages, then GENERATED messages of the seed. */
function messagesFor(seed: number): string[] {
  return [ISSUE_MESSAGE, ...longestMessages(), ...fc.sample(messageArbitrary.filter(readableFromLog), { seed, numRuns: GENERATED })];
}

const seconds = (since: number): string => ((Date.now() - since) / 1000).toFixed(1);
const list = (items: unknown[]): string => JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
/** A message or output in a failure message, JSON-quoted, the longest cut short. */
const shown = (text: string): string => JSON.stringify(text.length > 300 ? `${text.slice(0, 300)}...` : text);

/** Each message whose run did not print exactly it and a newline, described for the failure message. */
function mismatches(messages: Map<string, string>, outputs: Map<string, RunOutput>): string[] {
  const wrong: string[] = [];
  for (const [key, message] of messages) {
    const output = outputs.get(key)!;
    if ('failed' in output) {
      wrong.push(`${key} ${shown(message)}: ${output.failed}`);
      continue;
    }
    const want = Buffer.from(`${message}\n`, 'utf8');
    if (output.printed.equals(want)) continue;
    let at = 0;
    while (at < want.length && output.printed[at] === want[at]) at++;
    wrong.push(
      `${key} ${shown(message)}: printed ${shown(output.printed.toString('utf8'))} ` +
        `(${output.printed.length} bytes, want ${want.length}; first difference at byte ${at})`,
    );
  }
  return wrong;
}

function assertPrintedExactly(t: TestContext, kind: string, seed: number, messages: Map<string, string>, outputs: Map<string, RunOutput>) {
  const issue = outputs.get([...messages].find(([, m]) => m === ISSUE_MESSAGE)![0])!;
  if ('printed' in issue)
    t.diagnostic(`${kind}: ${JSON.stringify(ISSUE_MESSAGE)} printed ${JSON.stringify(issue.printed.toString('utf8'))}`);
  const wrong = mismatches(messages, outputs);
  assert.deepEqual(
    wrong.slice(0, 10),
    [],
    `${kind}: ${wrong.length} of ${messages.size} messages not printed exactly (fast-check seed ${seed}; the first 10 shown)`,
  );
}

test(
  'every message the CRD admits is printed byte for byte: 205 messages by Echos, the same by ScheduledEchos (their CronJobs equal, 25 run)',
  { timeout: 2 * RUNS_TIMEOUT_MS + 120_000 },
  async (t) => {
    const ns = testNamespace(t, 'node-messages-property', {}, { pods: true });
    await operatorFor(t, ns);
    const read = podLogReader(t);
    let started = Date.now();

    const echoMessages = new Map(messagesFor(SEED).map((m, i) => [`m-${i}`, m]));
    const echoOutputs = await runAll({
      ns,
      label: ECHO_LABEL,
      keys: [...echoMessages.keys()],
      start: (keys) =>
        kubectlOk(['create', '-f', '-'], {
          namespace: ns,
          input: list(
            keys.map((name) => ({
              apiVersion: 'mmontes.io/v1alpha1',
              kind: 'Echo',
              metadata: { name },
              spec: { message: echoMessages.get(name) },
            })),
          ),
        }),
      read,
      window: WINDOW,
      timeoutMs: RUNS_TIMEOUT_MS,
    });
    assertPrintedExactly(t, 'Echo', SEED, echoMessages, echoOutputs);
    await eventually(
      'every Echo Succeeded',
      () => listItems<Echo>(['get', 'echos'], { namespace: ns }).every((e) => e.status?.phase === 'Succeeded'),
      120_000,
      1_000,
    );
    t.diagnostic(`Echo: ${echoMessages.size} messages printed and read in ${seconds(started)} s`);
    started = Date.now();

    const scheduledMessages = new Map([...echoMessages].map(([key, m]) => [`s-${key.slice(2)}`, m]));
    kubectlOk(['create', '-f', '-'], {
      namespace: ns,
      input: list(
        [...scheduledMessages].map(([name, message]) => ({
          apiVersion: 'mmontes.io/v1alpha1',
          kind: 'ScheduledEcho',
          metadata: { name },
          spec: { message, schedule: NOT_DURING_THE_TEST },
        })),
      ),
    });
    const cronJobs = await eventually(
      `the operator's ${scheduledMessages.size} CronJobs`,
      () => {
        const all = listItems<V1CronJob>(['get', 'cronjobs', '-l', SCHEDULED_ECHO_LABEL], { namespace: ns });
        return all.length === scheduledMessages.size && new Map(all.map((c) => [c.metadata!.labels![SCHEDULED_ECHO_LABEL]!, c]));
      },
      120_000,
      1_000,
    );
    const echoJobs = new Map(
      listItems<V1Job>(['get', 'jobs', '-l', ECHO_LABEL], { namespace: ns }).map((j) => [j.metadata!.labels![ECHO_LABEL]!, j]),
    );
    const differing = [...scheduledMessages.keys()].filter((key) => {
      const scheduled = cronJobs.get(key)!.spec.jobTemplate.spec!.template.spec!.containers;
      const once = echoJobs.get(`m-${key.slice(2)}`)?.spec!.template.spec!.containers;
      return JSON.stringify(printing(scheduled)) !== JSON.stringify(once && printing(once));
    });
    assert.deepEqual(differing.slice(0, 10), [], `CronJob containers that differ from the Echo Job's for the same message (seed ${SEED})`);
    const fixed = 1 + longestMessages().length;
    const sampled = [...scheduledMessages.keys()].slice(0, fixed + SCHEDULED_RUNS);
    const scheduledOutputs = await runAll({
      ns,
      label: SCHEDULED_ECHO_LABEL,
      keys: sampled,
      start: (keys) => kubectlOk(['create', '-f', '-'], { namespace: ns, input: list(keys.map((k) => jobFrom(cronJobs.get(k)!))) }),
      read,
      window: WINDOW,
      timeoutMs: RUNS_TIMEOUT_MS,
    });
    const sampledMessages = new Map(sampled.map((k) => [k, scheduledMessages.get(k)!]));
    assertPrintedExactly(t, 'ScheduledEcho', SEED, sampledMessages, scheduledOutputs);
    t.diagnostic(
      `ScheduledEcho: ${scheduledMessages.size} CronJobs print as their Echo's Job does; ${sampled.length} printed and read in ${seconds(started)} s`,
    );
  },
);

/** What decides a container's output: what it runs, and with which environment. */
const printing = (containers: V1Container[]) =>
  containers.map((c) => ({ image: c.image, command: c.command, args: c.args, env: c.env, envFrom: c.envFrom, workingDir: c.workingDir }));

/** The Job `kubectl create job --from=cronjob/NAME` makes: the CronJob's job template, owned (not controlled) by it. */
function jobFrom(cronJob: V1CronJob): V1Job {
  const template = cronJob.spec.jobTemplate;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: `${cronJob.metadata!.name}-manual`,
      annotations: { 'cronjob.kubernetes.io/instantiate': 'manual', ...template.metadata?.annotations },
      labels: template.metadata?.labels,
      ownerReferences: [{ apiVersion: 'batch/v1', kind: 'CronJob', name: cronJob.metadata!.name!, uid: cronJob.metadata!.uid! }],
    },
    spec: template.spec,
  };
}
