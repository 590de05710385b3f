/**
 * No credential of a URL or an exec plugin's arguments reaches the operator's output (issue 32,
 * item 6b). A password is planted in every place a user may put one: HTTPS_PROXY (with a scheme
 * the operator refuses, and with a valid one at a proxy that is not there), a kubeconfig
 * cluster's proxy-url, the kubeconfig server URL's userinfo, and an exec credential plugin's
 * arguments (the plugin repeats them on stderr, as a plugin complaining about its flags does).
 * The operator runs as it ships (the bundle, under `npm test`) until it has said what is wrong;
 * its whole stdout and stderr must not hold the password, and must show where it was redacted
 * (so the scan is not vacuous). Before, the start-up error quoted the proxy URL whole:
 * `HTTPS_PROXY has the scheme socks4 ("socks4://svc-user:<password>@...")`.
 *
 * Needs no API server: nothing here is reachable.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { freePort } from '../../scripts/testbed/controlplane/cluster.js';
import { eventually } from '../support/kube.js';
import { startOperator, type OperatorProcess } from '../support/operator.js';

const PLANTED = 'Pl4ntedPassw0rd';
const tmp = mkdtempSync(join(tmpdir(), 'echoperator-redaction-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/** No proxy from the test runner's own environment: each run sets the one it means. */
const NO_PROXIES = { HTTPS_PROXY: '', https_proxy: '', HTTP_PROXY: '', http_proxy: '', NO_PROXY: '', no_proxy: '' };

/** A kubeconfig file whose cluster and user are these. */
function kubeconfigFile(name: string, cluster: Record<string, unknown>, user: Record<string, unknown>): string {
  const path = join(tmp, name);
  writeFileSync(
    path,
    JSON.stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster }],
      users: [{ name: 'u', user }],
      contexts: [{ name: 'x', context: { cluster: 'c', user: 'u' } }],
      'current-context': 'x',
    }),
    { mode: 0o600 },
  );
  return path;
}

/** A server URL with the password in its userinfo, on a name that never resolves. */
const SERVER = `https://kube-user:${PLANTED}@api.redaction.invalid:6443`;

/** Everything the run wrote, once it has ended (or been stopped). */
async function fullOutput(op: OperatorProcess): Promise<string> {
  await op.stop('SIGKILL');
  return op.output();
}

function assertRedacted(output: string, marker: string): void {
  assert.ok(output.includes(marker), `the run shows ${marker}:\n${output.slice(-3000)}`);
  assert.ok(!output.includes(PLANTED), `the planted password appears in the output:\n${output}`);
}

test(
  'a refused proxy scheme, in HTTPS_PROXY or the kubeconfig proxy-url: the start-up error hides the password',
  { timeout: 60_000 },
  async (t) => {
    const plain = kubeconfigFile('plain', { server: 'https://api.redaction.invalid:6443' }, { token: 'not-a-secret-here' });
    const byEnv = await startOperator(t, {
      ...NO_PROXIES,
      KUBECONFIG: plain,
      HTTPS_PROXY: `socks4://svc-user:${PLANTED}@proxy.redaction.invalid:1080`,
    });
    const proxyUrl = kubeconfigFile(
      'proxy-url',
      { server: 'https://api.redaction.invalid:6443', 'proxy-url': `socks4://svc-user:${PLANTED}@proxy.redaction.invalid:1080` },
      { token: 'not-a-secret-here' },
    );
    const byKubeconfig = await startOperator(t, { ...NO_PROXIES, KUBECONFIG: proxyUrl });
    assert.equal(await byEnv.exited, 2);
    assert.equal(await byKubeconfig.exited, 2);
    assertRedacted(byEnv.output(), 'HTTPS_PROXY has the scheme socks4 ("socks4://xxxxx@proxy.redaction.invalid:1080")');
    assertRedacted(byKubeconfig.output(), `the kubeconfig cluster's proxy-url has the scheme socks4 ("socks4://xxxxx@`);
  },
);

test(
  'a proxy password with "/", "#" or "?", which stop the URL from parsing: the start-up error hides it',
  { timeout: 60_000 },
  async (t) => {
    const plain = kubeconfigFile('plain-unparsed', { server: 'https://api.redaction.invalid:6443' }, { token: 'not-a-secret-here' });
    // A quote does not stop WHATWG URL parsing (it is percent-encoded in the password): such a
    // proxy is used, not refused; the unit tests cover its redaction in messages.
    for (const c of ['/', '#', '?']) {
      const half = Math.floor(PLANTED.length / 2);
      const run = await startOperator(t, {
        ...NO_PROXIES,
        KUBECONFIG: plain,
        HTTPS_PROXY: `http://svc-user:${PLANTED.slice(0, half)}${c}${PLANTED.slice(half)}@proxy.redaction.invalid:3128`,
      });
      assert.equal(await run.exited, 2);
      const output = run.output();
      assertRedacted(output, 'HTTPS_PROXY is not a proxy URL: "http://xxxxx@proxy.redaction.invalid:3128"');
      for (const part of [PLANTED.slice(0, half), PLANTED.slice(half)]) assert.ok(!output.includes(part), `${c}: ${part} in\n${output}`);
    }
  },
);

test(
  'a server URL with a password, behind a proxy with one that is not there, with an exec plugin given secrets: nothing leaks',
  { timeout: 120_000 },
  async (t) => {
    const deadProxy = await freePort();
    const credential = JSON.stringify({
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      status: { token: 'exec-token-not-planted' },
    });
    const kubeconfig = kubeconfigFile(
      'exec',
      { server: SERVER },
      {
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          interactiveMode: 'Never',
          command: '/bin/sh',
          // $0 is the credential it prints; "$*", the rest, it repeats on stderr.
          args: [
            '-c',
            'echo "plugin: unexpected flags $*" >&2; printf "%s" "$0"',
            credential,
            '--password',
            PLANTED,
            `--token=${PLANTED}`,
            `--endpoint=https://sts-user:${PLANTED}@sts.redaction.invalid`,
          ],
        },
      },
    );
    const op = await startOperator(t, {
      ...NO_PROXIES,
      KUBECONFIG: kubeconfig,
      HTTPS_PROXY: `http://svc-user:${PLANTED}@127.0.0.1:${deadProxy}`,
      LOG_LEVEL: 'debug',
    });
    await eventually(
      'the operator to say it cannot reach the API server, and to log what the plugin said',
      () => op.output().includes('cannot reach the API server') && op.output().includes('plugin: unexpected flags'),
      60_000,
    );
    const output = await fullOutput(op);
    assertRedacted(output, 'https://kube-user:xxxxx@api.redaction.invalid:6443');
    assert.match(
      output,
      /plugin: unexpected flags --password xxxxx --token=\S+ --endpoint=https:\/\/sts-user:xxxxx@sts\.redaction\.invalid/,
    );
    assert.ok(output.includes(`proxy 127.0.0.1:${deadProxy}`), 'the request went to the proxy');
  },
);
