/**
 * Starting before the cluster is ready (issue 7): no API server yet, then no CRDs. The operator
 * says what is wrong once, clearly, with what to do, keeps retrying, and works as soon as the
 * problem is fixed, without a restart. On a PRIVATE control plane, started late by this file.
 *
 * Retrying is bounded by the start-up deadline (CACHE_SYNC_TIMEOUT_SECONDS, issue 20): behind a
 * proxy that accepts and never answers, the operator exits 1 at that deadline naming the proxy.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import { freePort, writeKubeconfig } from '../../scripts/testbed/controlplane/cluster.js';
import { generatePki } from '../../scripts/testbed/controlplane/pki.js';
import { crdName } from '../../src/api/crd.js';
import { reflectorBackoffDefaults } from '../../src/runtime/backoff.js';
import { CUSTOM_RESOURCES } from '../../src/controllers/index.js';
import { within } from '../support/eventually.js';
import { eventually, itemsOf } from '../support/kube.js';
import { startOperator, waitReady, type OperatorProcess } from '../support/operator.js';
import {
  echoManifest,
  logEntries,
  messageOf,
  requestsEndedWith,
  startPrivateControlPlane,
  type LogEntry,
  type PrivateControlPlane,
} from '../support/faults.js';

let cp: PrivateControlPlane | undefined;
const tmp = mkdtempSync(join(tmpdir(), 'echoperator-fault-startup-'));

after(async () => {
  await cp?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

const CANNOT_REACH = 'cannot reach the API server';
const INSTALL_HINT = 'kubectl apply --server-side -f crds/';
/** The operator's CRDs, and how the message of their absence names them: "echos.mmontes.io and scheduledechos.mmontes.io". */
const CRDS = CUSTOM_RESOURCES.map(crdName);
const CRDS_NAMED = CRDS.map((n) => n.replaceAll('.', '\\.')).join(' and ');
/**
 * The two tests below show retrying until the problem is fixed; how long fixing it takes (starting
 * a control plane on a loaded machine) is not theirs to bound, so their start-up deadline is long.
 */
const PATIENT = { CACHE_SYNC_TIMEOUT_SECONDS: '600' };
/** The longest wait between two attempts of the preflight (its Backoff has the defaults). */
const PREFLIGHT_BACKOFF_CAP_MS = reflectorBackoffDefaults.maxMs;

/** Log entries at error level whose message contains `text`. */
async function errorsContaining(op: OperatorProcess, text: string): Promise<LogEntry[]> {
  return (await logEntries(op)).filter((e) => e.level === 'error' && String(e.msg).includes(text));
}

/**
 * Resolves once the operator has made two more attempts since it said its problem, so that "said
 * once" below covers retries that did happen. Each attempt ends `perAttempt` requests with `code`
 * (no answer: /version and the CRDs' group discovery; CRDs missing: the discovery alone). The
 * attempts come 0.8-1.6 s apart, then twice as far each time, up to 30 s (the preflight's
 * backoff, client-go's reflector's): on a loaded machine the problem may be read several attempts
 * after it was said, so the next two can be up to a minute away.
 */
async function retriedTwice(op: OperatorProcess, code: string, perAttempt: number): Promise<void> {
  const atFirst = await requestsEndedWith(op, code);
  assert.ok(atFirst >= perAttempt, `the attempt that said the problem is counted (rest_client_requests_total{code="${code}"})`);
  await eventually(
    `two more attempts (requests ending ${code})`,
    async () => (await requestsEndedWith(op, code)) >= atFirst + 2 * perAttempt,
    2 * PREFLIGHT_BACKOFF_CAP_MS + 15_000,
  );
}

async function readyz(op: OperatorProcess): Promise<number> {
  return (await fetch(`http://127.0.0.1:${op.healthPort}/readyz`)).status;
}

/** An Echo in a fresh namespace of the private control plane gets its Job. */
async function echoGetsJob(ns: string): Promise<void> {
  const k = cp!.kubectl;
  k.ok(['create', 'namespace', ns]);
  k.ok(['create', '-f', '-'], { namespace: ns, input: echoManifest('hello', 'Hola, 世界!') });
  const job = await eventually(
    'the Echo to get its Job',
    () => itemsOf<V1Job>(k, ['get', 'jobs', '-l', 'mmontes.io/echo=hello'], { namespace: ns })[0],
    60_000,
    500,
  );
  assert.equal(messageOf(job), 'Hola, 世界!');
  await eventually(
    'the Echo status to name it',
    () => k.json<Echo>(['get', 'echo', 'hello'], { namespace: ns }).status?.jobName === job.metadata!.name,
  );
}

test('API server unreachable at start: a clear message, retries, then it works once the server is up', { timeout: 300_000 }, async (t) => {
  // The certificates exist before the server does, so the kubeconfig is the one that will work.
  const pki = generatePki();
  const port = await freePort();
  const kubeconfig = join(tmp, 'kubeconfig');
  writeKubeconfig(kubeconfig, `https://127.0.0.1:${port}`, pki);
  const op = await startOperator(t, { KUBECONFIG: kubeconfig, NAMESPACE: 'default', ...PATIENT });

  await eventually(
    'the operator to say it cannot reach the API server',
    async () => (await errorsContaining(op, CANNOT_REACH)).length > 0,
    60_000,
  );
  const [first] = await errorsContaining(op, CANNOT_REACH);
  assert.match(first!.msg, new RegExp(`cannot reach the API server at https://127\\.0\\.0\\.1:${port}: .*ECONNREFUSED.*; retrying`));
  await retriedTwice(op, '<error>', 2);
  assert.equal(op.proc.exitCode, null, 'it keeps running');
  assert.equal(await readyz(op), 500, 'not ready while the server is unreachable');
  assert.equal((await errorsContaining(op, CANNOT_REACH)).length, 1, 'said once, not at every retry');

  cp = await startPrivateControlPlane({ apiserverPort: port, pki });
  // The server is up but the CRDs are not installed yet: the next problem, with its remedy.
  await eventually('the operator to say the CRDs are missing', async () => (await errorsContaining(op, INSTALL_HINT)).length > 0, 60_000);
  assert.match((await errorsContaining(op, INSTALL_HINT))[0]!.msg, new RegExp(`${CRDS_NAMED} are not installed`));
  cp.installCrds();
  await waitReady(op, 90_000);
  await echoGetsJob('late-server');
  assert.ok((await logEntries(op)).some((e) => e.msg === 'API server reachable and CRDs installed; starting'));
  // While the server starts it may also answer 503 (paths not installed yet): a different
  // problem, said once too. What must not happen is the same message at every retry.
  const said = (await errorsContaining(op, CANNOT_REACH)).map((e) => String(e.msg));
  assert.equal(new Set(said).size, said.length, `each problem said once:\n${said.join('\n')}`);
  assert.equal(await op.stop('SIGTERM'), 0);
});

test(
  'CRDs missing: a message naming how to install them, then it works without a restart once they are',
  { timeout: 300_000 },
  async (t) => {
    // The previous test's control plane, now without the CRDs (or a fresh one if that test failed early).
    cp ??= await startPrivateControlPlane();
    const k = cp.kubectl;
    k.ok(['delete', 'crd', ...CRDS, '--wait=true', '--ignore-not-found']);
    const op = await startOperator(t, { KUBECONFIG: cp.state.kubeconfig, NAMESPACE: 'default', ...PATIENT });
    await eventually('the operator to say the CRDs are missing', async () => (await errorsContaining(op, INSTALL_HINT)).length > 0, 60_000);
    const [said] = await errorsContaining(op, INSTALL_HINT);
    assert.match(
      said!.msg,
      new RegExp(
        `the CustomResourceDefinitions ${CRDS_NAMED} are not installed in https://127\\.0\\.0\\.1:\\d+: install them with \`kubectl apply --server-side -f crds/\``,
      ),
    );
    assert.equal((await errorsContaining(op, CANNOT_REACH)).length, 0, 'the server itself was reachable');
    await retriedTwice(op, '404', 1);
    assert.equal(op.proc.exitCode, null, 'it keeps running');
    assert.equal(await readyz(op), 500, 'not ready without CRDs');
    assert.equal((await errorsContaining(op, INSTALL_HINT)).length, 1, 'said once, not at every retry');

    cp.installCrds();
    await waitReady(op, 90_000);
    await echoGetsJob('late-crds');
    assert.equal(await op.stop('SIGTERM'), 0);
  },
);

test(
  'behind a proxy that accepts and never answers: exit 1 at the start-up deadline, naming the proxy',
  { timeout: 120_000 },
  async (t) => {
    // A listener that accepts every connection and never says a word (a proxy gone silent).
    const accepted: Socket[] = [];
    const closed: Promise<void>[] = [];
    const silent = createServer((socket) => {
      accepted.push(socket);
      closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
      socket.on('error', () => undefined).resume();
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      for (const s of accepted) s.destroy();
      silent.close();
    });
    const proxy = `127.0.0.1:${(silent.address() as { port: number }).port}`;
    const kubeconfig = join(tmp, 'kubeconfig-silent-proxy');
    writeFileSync(
      kubeconfig,
      JSON.stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'c', cluster: { server: 'https://kubernetes.example:6443', 'proxy-url': `http://${proxy}` } }],
        users: [{ name: 'u', user: { token: 'not-a-real-token' } }],
        contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
        'current-context': 'x',
      }),
      { mode: 0o600 },
    );
    const deadlineSeconds = 15;
    const op = await startOperator(t, {
      KUBECONFIG: kubeconfig,
      NAMESPACE: 'default',
      CACHE_SYNC_TIMEOUT_SECONDS: String(deadlineSeconds),
    });
    // The deadline plus generous slack for a loaded machine (start-up of the process included):
    // without a deadline the operator would retry forever and this would time out.
    const code = await within('the operator to exit', op.exited, (deadlineSeconds + 45) * 1000).catch((err: unknown) =>
      assert.fail(`${String(err)}:\n${op.output()}`),
    );
    assert.equal(code, 1, `the operator exits 1 at its start-up deadline:\n${op.output()}`);
    const fatal = (await logEntries(op)).filter((e) => e.level === 'error' && /could not start in time/.test(String(e.msg)));
    assert.equal(fatal.length, 1, op.output());
    assert.match(
      String(fatal[0]!.error),
      new RegExp(
        `^not started within ${deadlineSeconds} s \\(CACHE_SYNC_TIMEOUT_SECONDS\\): cannot reach the API server at https://kubernetes\\.example:6443: .*proxy ${proxy.replace(/\./g, '\\.')} did not answer CONNECT within 10000 ms`,
      ),
    );
    assert.ok(accepted.length >= 1, 'the operator tried the proxy');
    await Promise.all(closed); // every connection it opened to the proxy was closed (the process exited)
  },
);
