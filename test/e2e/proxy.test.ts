/**
 * Proxies (issue 13, defect 5): the kubeconfig's proxy-url, and HTTPS_PROXY with NO_PROXY, are
 * honoured as client-go honours them, for requests and watches alike.
 *
 * The proxy is a real CONNECT proxy (test/support/connectproxy.ts). To show that EVERY request
 * and watch went through it, not merely some: with proxy-url the server's name is one that only
 * the proxy can resolve, so the operator has no other way in, and after the proxy cuts every
 * tunnel the operator still sees a new Echo (its watches came back through the proxy); with
 * HTTPS_PROXY the API server is reached on a non-loopback address through a forwarder that
 * records where each connection came from: every one came from the proxy's own onward
 * connections, or (NO_PROXY names the address, or the address is loopback) none did.
 *
 * A proxy that goes silent (issue 20, item 3: accepts, never answers, its tunnels stop carrying
 * bytes): the leader steps down within its renew deadline and exits non-zero, a standby's
 * /healthz turns red (naming the check, not the reason), and all is well once the proxy speaks.
 */
import assert from 'node:assert/strict';
import { lookup } from 'node:dns/promises';
import { rmSync, writeFileSync } from 'node:fs';
import { networkInterfaces } from 'node:os';
import { test, type TestContext } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { ECHOS } from '../../src/api/echo.js';
import { resourcePath } from '../../src/kube/index.js';
import { connectProxy, forwarder, type ConnectProxy } from '../support/connectproxy.js';
import { get, type Reply } from '../support/http.js';
import { echoManifest, logEntries, pool, restClient, type LogEntry } from '../support/faults.js';
import { applyEcho, eventually, jobsOf, kubeconfig, kubectlOk, testNamespace } from '../support/kube.js';
import { getEcho } from '../support/runs.js';
import {
  haReplicaEnv,
  installCrds,
  startOperator,
  TEST_LEASE,
  waitReady,
  withOperatorOutput,
  type OperatorProcess,
} from '../support/operator.js';

interface Cluster {
  server: string;
  'proxy-url'?: string;
  'tls-server-name'?: string;
}

/** The test cluster's kubeconfig with its cluster entry edited, in a file removed after the test. */
function kubeconfigWith(t: TestContext, edit: (cluster: Cluster) => void): string {
  const cfg = JSON.parse(kubectlOk(['config', 'view', '--raw', '--minify', '-o', 'json'])) as { clusters: { cluster: Cluster }[] };
  edit(cfg.clusters[0]!.cluster);
  const path = `${kubeconfig()}.proxy-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  writeFileSync(path, JSON.stringify(cfg), { mode: 0o600 });
  t.after(() => rmSync(path, { force: true }));
  return path;
}

function apiServer(): URL {
  const cfg = JSON.parse(kubectlOk(['config', 'view', '--raw', '--minify', '-o', 'json'])) as { clusters: { cluster: Cluster }[] };
  return new URL(cfg.clusters[0]!.cluster.server);
}

/**
 * A CONNECT proxy that resolves `name` to the API server's host, and a kubeconfig that reaches the
 * API server as `name` through it (proxy-url): where `name` does not resolve, the proxy is the only way in.
 */
async function reachableOnlyThroughProxy(t: TestContext, name: string): Promise<{ api: URL; proxy: ConnectProxy; kc: string }> {
  const api = apiServer();
  const proxy = await connectProxy(t, { [name]: api.hostname });
  const kc = kubeconfigWith(t, (c) => {
    c.server = `https://${name}:${api.port}`;
    c['proxy-url'] = proxy.url;
  });
  return { api, proxy, kc };
}

/** The operator for `ns` with this kubeconfig and proxy environment (nothing inherited). */
async function operator(t: TestContext, ns: string, kc: string, proxyEnv: Record<string, string>): Promise<OperatorProcess> {
  const env = { HTTPS_PROXY: '', https_proxy: '', HTTP_PROXY: '', http_proxy: '', NO_PROXY: '', no_proxy: '', ...proxyEnv };
  const op = await startOperator(t, { KUBECONFIG: kc, WATCH_NAMESPACES: ns, NAMESPACE: ns, ...env });
  await waitReady(op);
  return op;
}

/** An Echo applied now (so only a watch can tell the operator) gets its Job and status. */
async function reconciled(ns: string, name: string): Promise<void> {
  applyEcho(ns, name, `hello from ${name}`);
  await eventually(`Echo ${name} reconciled`, () => jobsOf(ns, name).length === 1 && getEcho(ns, name).status?.jobName, 60_000);
}

function nonLoopbackIPv4(): string {
  for (const addrs of Object.values(networkInterfaces())) {
    for (const a of addrs ?? []) if (a.family === 'IPv4' && !a.internal) return a.address;
  }
  throw new Error('this machine has no non-loopback IPv4 address: the HTTPS_PROXY test needs one (loopback is never proxied)');
}

test(
  "the kubeconfig's proxy-url carries every request and watch, also after the proxy cuts its tunnels",
  { timeout: 180_000 },
  async (t) => {
    installCrds();
    const name = 'kubernetes.default.svc';
    await assert.rejects(lookup(name), `precondition: ${name} must not resolve on this machine (only the proxy resolves it)`);
    const { api, proxy, kc } = await reachableOnlyThroughProxy(t, name);
    const ns = testNamespace(t, 'proxy-url');
    await operator(t, ns, kc, {});
    await reconciled(ns, 'first');
    assert.ok(proxy.targets.length >= 1, 'the proxy saw the operator');
    assert.deepEqual(new Set(proxy.targets), new Set([`${name}:${api.port}`]), 'every tunnel went to the API server');

    const before = proxy.targets.length;
    proxy.cut();
    await reconciled(ns, 'second');
    assert.ok(proxy.targets.length > before, 'the operator reconnected, through the proxy');
  },
);

test(
  'HTTPS_PROXY is used for a non-loopback server unless NO_PROXY names it, and never for a loopback one',
  { timeout: 240_000 },
  async (t) => {
    installCrds();
    const api = apiServer();
    const ip = nonLoopbackIPv4();
    const fwd = await forwarder(t, ip, { host: api.hostname, port: Number(api.port) });
    const proxy = await connectProxy(t);
    // The serving certificate names localhost, not this address: verify it under that name.
    const kc = kubeconfigWith(t, (c) => {
      c.server = `https://${fwd.address}`;
      c['tls-server-name'] = 'localhost';
    });

    // NO_PROXY names other hosts only: the proxy carries everything.
    const viaProxy = testNamespace(t, 'https-proxy');
    let op = await operator(t, viaProxy, kc, { HTTPS_PROXY: proxy.url, NO_PROXY: 'example.com,10.255.0.0/16,.svc' });
    await reconciled(viaProxy, 'proxied');
    assert.ok(proxy.targets.length >= 1, 'the proxy saw the operator');
    assert.deepEqual(new Set(proxy.targets), new Set([fwd.address]));
    assert.ok(fwd.remotePorts.length >= 1);
    assert.deepEqual(
      fwd.remotePorts.filter((p) => !proxy.onwardPorts.has(p)),
      [],
      'every connection to the API server came from the proxy',
    );
    await op.stop();

    // NO_PROXY names the address (as a CIDR block, lower case variable): direct, the proxy sees nothing.
    const tunnels = proxy.targets.length;
    const accepted = fwd.remotePorts.length;
    const direct = testNamespace(t, 'no-proxy');
    op = await operator(t, direct, kc, { https_proxy: proxy.url, no_proxy: `example.com, ${ip}/32` });
    await reconciled(direct, 'direct');
    assert.equal(proxy.targets.length, tunnels, 'no tunnel for a NO_PROXY host');
    const fresh = fwd.remotePorts.slice(accepted);
    assert.ok(fresh.length >= 1, 'the operator reached the server directly');
    assert.deepEqual(
      fresh.filter((p) => proxy.onwardPorts.has(p)),
      [],
      'none of its connections came from the proxy',
    );
    await op.stop();

    // The test cluster's own kubeconfig (a loopback address): never proxied through the environment.
    const loopback = testNamespace(t, 'loopback');
    await operator(t, loopback, kubeconfig(), { HTTPS_PROXY: proxy.url });
    await reconciled(loopback, 'loopback');
    assert.equal(proxy.targets.length, tunnels, 'no tunnel for a loopback server');
  },
);

test(
  'a proxy gone silent: the leader steps down within its renew deadline, a standby turns /healthz red, and recovers once the proxy answers',
  { timeout: 300_000 },
  async (t) => {
    installCrds();
    const name = 'kubernetes.default.svc';
    const { api, proxy, kc } = await reachableOnlyThroughProxy(t, name);
    const ns = testNamespace(t, 'proxy-silent');
    const said = async (op: OperatorProcess, msg: string): Promise<LogEntry[]> => (await logEntries(op)).filter((e) => e.msg === msg);
    const leader = await operator(t, ns, kc, haReplicaEnv(ns, 'leader'));
    await eventually('the first replica to lead', async () => (await said(leader, 'started leading; starting workers')).length > 0, 60_000);
    const bound = 5;
    const standby = await operator(t, ns, kc, { ...haReplicaEnv(ns, 'standby'), API_UNREACHABLE_TIMEOUT_SECONDS: String(bound) });
    await reconciled(ns, 'before');
    // A connection of its own per probe, as the kubelet's: a pooled one the server had just closed
    // as idle failed a loaded run with "other side closed".
    const healthz = (path = '/healthz'): Promise<Reply> => get(standby.healthPort, path, { fresh: true });
    assert.equal((await healthz()).status, 200);

    // A burst keeps the leader's queue busy, and its Events wait while it is (the recorder yields
    // to reconciles): when the proxy goes silent, Events are still unwritten.
    const burst = Array.from({ length: 200 }, (_, i) => `burst-${i}`);
    // Created asynchronously: a synchronous kubectl would stop this process reading the leader's
    // log pipe, and a leader blocked on a full pipe for its renew deadline (6 s) loses the lease.
    const rest = restClient(t, kubeconfig());
    await pool(burst, 16, (name) =>
      rest.request('POST', resourcePath(ECHOS, ns), { body: JSON.parse(echoManifest(name, `hello from ${name}`)) as unknown }),
    );
    await withOperatorOutput(leader, () =>
      eventually(
        'a Job of the burst',
        async () => (await said(leader, 'job created')).some((e) => e.name?.startsWith('burst-')),
        60_000,
        0,
      ),
    );
    proxy.silence(true);
    // The leader's renewals hang in the silent tunnels: it stops leading at its renew deadline and
    // exits 1 (a fresh process stands again). Generous slack for a loaded machine; without the
    // deadline reaching the tunnels its informers never stop and it never exits.
    const giveUp = new AbortController();
    const code = await Promise.race([
      leader.exited,
      sleep((TEST_LEASE.renew + 30) * 1000, 'still running', { signal: giveUp.signal }).catch(() => 'still running'),
    ]).finally(() => giveUp.abort());
    const exitedAt = Date.now();
    assert.equal(code, 1, `the leader steps down and exits 1:\n${leader.output().slice(-3000)}`);
    const lost = await said(leader, 'leadership lost: exiting so that a fresh process can stand for election');
    assert.equal(lost.length, 1);
    assert.match(String(lost[0]!.error), new RegExp(`within renewDeadline \\(${TEST_LEASE.renew * 1000}ms\\)`));
    // No graceful shutdown once the lease is lost (as controller-runtime): the Events still waiting
    // are abandoned and counted, not flushed into the silent proxy for the shutdown budget (30 s).
    const abandoned = await said(leader, 'event recorder closed before all events were written');
    assert.equal(abandoned.length, 1, 'Events were waiting when the proxy went silent');
    assert.ok(Number(abandoned[0]!.abandoned) >= 1);
    assert.ok(exitedAt - Date.parse(lost[0]!.ts) < 5_000, `exited ${exitedAt - Date.parse(lost[0]!.ts)} ms after losing the lease`);
    // The burst has done its part: gone, so that the recovery below is not timed by the standby
    // reconciling 200 fresh Echos ahead of the one it is asked about on a loaded machine.
    kubectlOk(['delete', 'echos', '--all', '--wait=false'], { namespace: ns });

    // The standby's Lease reads get no answer: after the bound, /healthz fails, naming the check only.
    const red = await eventually(
      'the standby /healthz to fail',
      async () => {
        const r = await healthz('/healthz?verbose');
        return r.status === 500 && r;
      },
      90_000,
    );
    assert.match(red.body, /^\[-\]apiserver failed$/m);
    assert.doesNotMatch(red.body, /proxy|127\.0\.0\.1|kubernetes\.default/, 'no reason for an anonymous caller');
    const failing = (await said(standby, 'health check failing')).filter((e) => e.check === 'apiserver');
    assert.ok(failing.length >= 1, 'the reason is logged');
    assert.match(
      String(failing[0]!.reason),
      new RegExp(
        `^no answer from the API server at https://${name.replace(/\./g, '\\.')}:${api.port} through proxy 127\\.0\\.0\\.1:\\d+ for \\d+ s: `,
      ),
    );

    proxy.silence(false);
    await eventually('the standby /healthz to pass again', async () => (await healthz()).status === 200, 90_000);
    await eventually('the standby to take over', async () => (await said(standby, 'started leading; starting workers')).length > 0, 90_000);
    await withOperatorOutput(standby, () => reconciled(ns, 'after'));
  },
);
