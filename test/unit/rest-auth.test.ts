/**
 * Authentication inside the request deadline (issue 13, defect 9): an exec credential plugin
 * that never answers fails each request at its deadline, and a standby's acquire loop goes on.
 * No API server is needed: the requests never get past authentication.
 *
 * Exec plugins run by us (issue 20, item 7): one that outlives its deadline is killed with what
 * it started, not abandoned; a working one's token is used, cached until its expiry, and asked
 * for anew when the server refuses it.
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { restLeaseApi } from '../../src/kube/coordination.js';
import { ApiError } from '../../src/kube/errors.js';
import { RestClient, type RestClientOptions } from '../../src/kube/rest.js';
import { KubeLeaseLock, LeaderElector } from '../../src/runtime/leaderelection/index.js';
import { eventually, within } from '../support/eventually.js';
import { scratchDir } from '../support/scratch.js';

/** What KubeConfig.loadFromOptions takes. */
type KubeConfigOptions = Parameters<KubeConfig['loadFromOptions']>[0];

/** A kubeconfig whose user's exec plugin answers nothing for 20 s (then exits, leaving nothing behind). */
function hungPluginClient(): RestClient {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: 'https://127.0.0.1:1', skipTLSVerify: true }],
    users: [
      { name: 'u', exec: { apiVersion: 'client.authentication.k8s.io/v1', command: 'sleep', args: ['20'], interactiveMode: 'Never' } },
    ],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  } as KubeConfigOptions);
  const rest = new RestClient(kc);
  after(() => rest.close());
  return rest;
}

describe('exec credential plugins', () => {
  it("a plugin that never answers fails the request at its deadline (and by the caller's signal)", async () => {
    const rest = hungPluginClient();
    await assert.rejects(
      rest.request('GET', '/api', { timeoutMs: 200 }),
      (err: ApiError) => err.code === 0 && /timed out after 200 ms/.test(err.message),
    );
    const stop = new AbortController();
    setTimeout(() => stop.abort(new Error('stopping')), 100); // the caller gives up while the plugin hangs: any moment will do
    await assert.rejects(rest.request('GET', '/api', { signal: stop.signal }), (err: ApiError) => err.code === 0);
  });

  it("a standby's acquire loop goes on: every Lease read fails at its deadline and is tried again", async () => {
    const rest = hungPluginClient();
    let reads = 0;
    const lock = new KubeLeaseLock(restLeaseApi(rest, 150), 'ns', 'lease1');
    const stop = new AbortController();
    const counting = {
      get: () => {
        // The fourth read means three hung ones failed and the loop went on each time.
        if (++reads === 4) stop.abort();
        return lock.get();
      },
      create: lock.create.bind(lock),
      update: lock.update.bind(lock),
    };
    const elector = new LeaderElector(
      { leaseName: 'lease1', namespace: 'ns', identity: 'me', leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 100 },
      counting,
    );
    const run = elector
      .run(
        { onStartedLeading: async () => assert.fail('cannot lead without the API server'), onStoppedLeading: () => undefined },
        stop.signal,
      )
      .catch(() => undefined);
    await within('a fourth Lease read: the loop going on past each hung authentication', run, 10_000);
    assert.equal(reads, 4);
  });
});

const dir = scratchDir('echoperator-exec');

/** A client of `server` whose user runs `script` (sh) as its exec plugin. */
function pluginClient(server: string, script: string, options: RestClientOptions = {}): RestClient {
  const path = join(dir, `plugin-${Math.random().toString(36).slice(2, 8)}.sh`);
  writeFileSync(path, `#!/bin/sh\n${script}\n`, { mode: 0o755 });
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true }],
    users: [
      {
        name: 'u',
        exec: {
          apiVersion: 'client.authentication.k8s.io/v1',
          command: path,
          env: [{ name: 'STATE', value: dir }],
          interactiveMode: 'Never',
        },
      },
    ],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  } as KubeConfigOptions);
  const rest = new RestClient(kc, options);
  after(() => rest.close());
  return rest;
}

/** Alive: the process exists and is not a zombie waiting to be reaped. */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

async function gone(pids: number[]): Promise<void> {
  await eventually('every process of the plugin to be gone', () => !pids.some(alive), 10_000, 50).catch(() => undefined);
  assert.deepEqual(pids.filter(alive), [], 'every process of the plugin is gone');
}

/**
 * Freezes the wall clock (Date.now: the token's expiry, the reuse of one authentication) until the
 * test ends; the returned function moves it on. Set before the client is made, which keeps Date.now.
 */
function frozenWallClock(t: { after(fn: () => unknown): void }): (ms: number) => void {
  const real = Date.now;
  let now = real();
  Date.now = () => now;
  t.after(() => {
    Date.now = real;
  });
  return (ms) => {
    now += ms;
  };
}

describe('exec credential plugins, run by the operator', () => {
  for (const [what, trap] of [
    ['a plugin that sleeps forever', ''],
    ['one that ignores SIGTERM', "trap '' TERM"],
  ] as const) {
    it(`${what} is killed at its deadline, with what it started`, async () => {
      const pids = join(dir, `pids-${trap ? 'trap' : 'plain'}`);
      const rest = pluginClient('https://127.0.0.1:1', `${trap}\nsleep 1000 &\necho $$ $! > ${pids}.tmp && mv ${pids}.tmp ${pids}\nwait`, {
        // Long enough for a loaded CI machine to start the shell and record its pids before the deadline.
        exec: { timeoutMs: 2000, killGraceMs: 200 },
      });
      await assert.rejects(rest.request('GET', '/api', { timeoutMs: 10_000 }), (err: ApiError) => {
        assert.equal(err.code, 0);
        assert.match(err.message, /exec credential plugin ".*plugin-\w+\.sh" did not answer within 2000 ms; stopped it/);
        return true;
      });
      assert.ok(existsSync(pids), 'the plugin ran');
      const [shell, child] = readFileSync(pids, 'utf8').trim().split(' ').map(Number);
      await gone([shell!, child!]);
    });
  }

  it("a working plugin's token is used, cached until its expiry, and asked for anew after a 401", async (t) => {
    const passes = frozenWallClock(t);
    const seen: string[] = [];
    const api = createServer((req, res) => {
      const auth = req.headers.authorization ?? '';
      seen.push(auth);
      res.writeHead(auth === 'Bearer tok-2' ? 401 : 200, { 'Content-Type': 'application/json' }).end('{}');
    });
    await new Promise<void>((resolve) => api.listen(0, '127.0.0.1', resolve));
    after(() => api.close());
    const runs = join(dir, 'runs');
    const info = join(dir, 'exec-info');
    // Each run: count it, keep KUBERNETES_EXEC_INFO, answer a token valid for 3-4 s (whole seconds:
    // `date` truncates), long enough that a loaded machine still asks again within it.
    const rest = pluginClient(
      `http://127.0.0.1:${(api.address() as { port: number }).port}`,
      [
        `echo run >> "$STATE/runs"`,
        `n=$(wc -l < "$STATE/runs" | tr -d ' ')`,
        `printf '%s' "$KUBERNETES_EXEC_INFO" > ${info}`,
        `echo "some progress on stderr" >&2`,
        `exp=$(date -u -d '+4 seconds' +%Y-%m-%dT%H:%M:%SZ)`,
        `printf '{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"tok-%s","expirationTimestamp":"%s"}}' "$n" "$exp"`,
      ].join('\n'),
    );
    const count = (): number => readFileSync(runs, 'utf8').trim().split('\n').length;
    await rest.request('GET', '/api/a');
    passes(1100); // past the reuse of one authentication (1 s), within the token's validity (3-4 s from the run)
    await rest.request('GET', '/api/b');
    assert.equal(count(), 1, 'one run for both requests: the token is cached');
    assert.deepEqual(seen, ['Bearer tok-1', 'Bearer tok-1']);
    assert.deepEqual(JSON.parse(readFileSync(info, 'utf8')), {
      apiVersion: 'client.authentication.k8s.io/v1',
      kind: 'ExecCredential',
      spec: { interactive: false },
    });

    passes(10_000); // the token has expired (at most 4 s after the run, which was moments after the clock froze)
    await assert.rejects(rest.request('GET', '/api/c'), (err: ApiError) => err.code === 401);
    assert.equal(count(), 2, 'an expired token is asked for anew');
    await rest.request('GET', '/api/d');
    assert.equal(count(), 3, 'a refused token is asked for anew');
    assert.deepEqual(seen.slice(2), ['Bearer tok-2', 'Bearer tok-3']);
  });
});
