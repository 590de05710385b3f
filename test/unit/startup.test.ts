/**
 * The start-up deadline (issue 20, item 3; controller-runtime's CacheSyncTimeout): behind a proxy
 * that accepts and never answers, Manager.run() rejects at the deadline with an error naming the
 * proxy, instead of retrying forever. The e2e test (faults-startup) runs the whole process.
 */
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { runnableControllers } from '../../src/controllers/index.js';
import { RestClient } from '../../src/kube/rest.js';
import { Manager, type ManagerConfig } from '../../src/manager/manager.js';
import { StartupTimeoutError } from '../../src/manager/startup.js';
import { testManagerConfig, testSettings } from '../support/manager.js';

const config: ManagerConfig = testManagerConfig({ cacheSyncTimeoutMs: 400 });

describe('start-up deadline', () => {
  it('behind a proxy that never answers, run() rejects at the deadline naming the proxy', async (t) => {
    const accepted: Socket[] = [];
    const proxy = createServer((s) => void accepted.push(s.resume()));
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    t.after(() => {
      for (const s of accepted) s.destroy();
      proxy.close();
    });
    const port = (proxy.address() as { port: number }).port;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://api.example:6443', skipTLSVerify: true, proxyUrl: `http://127.0.0.1:${port}` }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const rest = new RestClient(kc, { env: {} });
    t.after(() => rest.close());
    const manager = new Manager(config, { rest }, runnableControllers(testSettings()));
    t.after(() => {
      for (const c of manager.controllers) c.queue.shutDown();
    });
    const stop = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const hang = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error('run() never settled')), 10_000)));
    const err = await Promise.race([
      manager.run(stop.signal).then(
        () => assert.fail('cannot start'),
        (e: unknown) => e,
      ),
      hang,
    ]).finally(() => clearTimeout(timer));
    assert.ok(err instanceof StartupTimeoutError, String(err));
    assert.match(
      err.message,
      new RegExp(
        `^not started within 0\\.4 s \\(CACHE_SYNC_TIMEOUT_SECONDS\\): cannot reach the API server at https://api\\.example:6443: GET /apis/mmontes\\.io/v1alpha1: proxy 127\\.0\\.0\\.1:${port} did not answer CONNECT`,
      ),
    );
    stop.abort();
  });
});
