/**
 * Authentication inside the request deadline (issue 13, defect 9): an exec credential plugin
 * that never answers fails each request at its deadline, and a standby's acquire loop goes on.
 * No API server is needed: the requests never get past authentication.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { restLeaseApi } from '../../src/kube/coordination.js';
import { ApiError } from '../../src/kube/errors.js';
import { RestClient } from '../../src/kube/rest.js';
import { KubeLeaseLock, LeaderElector } from '../../src/runtime/leaderelection/index.js';

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
  } as any);
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
    setTimeout(() => stop.abort(new Error('stopping')), 100);
    await assert.rejects(rest.request('GET', '/api', { signal: stop.signal }), (err: ApiError) => err.code === 0);
  });

  it("a standby's acquire loop goes on: every Lease read fails at its deadline and is tried again", async () => {
    const rest = hungPluginClient();
    let reads = 0;
    const lock = new KubeLeaseLock(restLeaseApi(rest, 150), 'ns', 'lease1');
    const counting = { get: () => (reads++, lock.get()), create: lock.create.bind(lock), update: lock.update.bind(lock) };
    const elector = new LeaderElector(
      { leaseName: 'lease1', namespace: 'ns', identity: 'me', leaseDurationMs: 1500, renewDeadlineMs: 1000, retryPeriodMs: 100 },
      counting,
    );
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 1200);
    await elector
      .run(
        { onStartedLeading: async () => assert.fail('cannot lead without the API server'), onStoppedLeading: () => undefined },
        stop.signal,
      )
      .catch(() => undefined);
    assert.ok(reads >= 3, `the loop went on past the hung authentication: ${reads} Lease reads`);
  });
});
