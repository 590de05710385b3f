/**
 * A watch ended by an ERROR event (410 Expired: the resourceVersion was compacted away) rejects
 * with that error and nothing else: the fault campaign found the operator crashing with an
 * unhandled 'error' on the socket when the server ended the stream right after the event, as the
 * API server does. A real listener sends exactly that, many times over.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { isGone } from '../../src/kube/errors.js';
import { JOBS } from '../../src/kube/resources.js';
import { RestClient } from '../../src/kube/rest.js';
import { kubeListerWatcher } from '../../src/runtime/informer/listwatch.js';

const EXPIRED =
  '{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version","reason":"Expired","code":410}}\n';

describe('a watch ended by an ERROR event', () => {
  it('rejects with the 410 every time, and no error escapes on the socket', async (t) => {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"type":"ADDED","object":{"metadata":{"name":"a","namespace":"x","resourceVersion":"5"}}}\n');
      res.end(EXPIRED);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const kc = new KubeConfig();
    const { port } = server.address() as { port: number };
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const rest = new RestClient(kc, { env: {} });
    t.after(() => rest.close());
    const escaped: unknown[] = [];
    const onUncaught = (err: unknown): void => void escaped.push(err);
    process.on('uncaughtException', onUncaught);
    t.after(() => process.off('uncaughtException', onUncaught));

    const watcher = kubeListerWatcher(rest, JOBS, { namespace: 'x' });
    for (let i = 0; i < 30; i++) {
      const seen: string[] = [];
      await assert.rejects(
        watcher.watch({ resourceVersion: '1' }, (e) => seen.push(e.type), new AbortController().signal),
        (err) => isGone(err),
      );
      assert.deepEqual(seen, ['ADDED']);
    }
    // An error emitted on a socket surfaces on a later turn of the event loop: give it one.
    await new Promise((resolve) => setImmediate(resolve));
    assert.deepEqual(escaped, []);
  });
});
