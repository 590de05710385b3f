/**
 * The operator refuses a Kubernetes older than the oldest it supports (src/api/kubernetes.ts):
 * the start ends at once, not after the start-up deadline, with an error naming both versions;
 * the version is read as distributions write it ("31+", v1.31.2-eks-…); a supported or newer
 * server goes on to the CRD check.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { MINIMUM_KUBERNETES } from '../../src/api/kubernetes.js';
import { runnableControllers } from '../../src/controllers/index.js';
import { Manager } from '../../src/manager/manager.js';
import { checkServerVersion, serverMinor, UnsupportedServerError } from '../../src/manager/preflight.js';
import { localRestClient } from '../support/localapi.js';
import { testManagerConfig, testSettings } from '../support/manager.js';

describe('the server version', () => {
  it('is read from major/minor as distributions write them, else from gitVersion', () => {
    assert.deepEqual(serverMinor({ major: '1', minor: '31', gitVersion: 'v1.31.0' }), [1, 31]);
    assert.deepEqual(serverMinor({ major: '1', minor: '31+', gitVersion: 'v1.31.2-gke.1' }), [1, 31]);
    assert.deepEqual(serverMinor({ major: '', minor: '', gitVersion: 'v1.30.4-eks-a737599' }), [1, 30]);
    assert.equal(serverMinor({}), undefined);
  });

  it('below the minimum is refused naming both versions; the minimum, newer minors and majors pass', () => {
    assert.throws(
      () => checkServerVersion({ major: '1', minor: '30', gitVersion: 'v1.30.14' }, '1.31', 'https://k'),
      (err: unknown) =>
        err instanceof UnsupportedServerError &&
        err.message ===
          'the API server at https://k runs Kubernetes v1.30.14, older than 1.31, the oldest this operator supports: upgrade the cluster to 1.31 or newer',
    );
    for (const [major, minor] of [
      ['1', '31'],
      ['1', '37'],
      ['2', '0'],
    ] as const) {
      checkServerVersion({ major, minor }, '1.31', 'https://k');
    }
    checkServerVersion({ gitVersion: 'unknown' }, '1.31', 'https://k');
  });

  it("an older server ends the manager's start at once, before any cache or lease request", async (t) => {
    const asked: string[] = [];
    const rest = await localRestClient((req, res) => {
      asked.push(req.url ?? '');
      res.setHeader('content-type', 'application/json');
      res.end(JSON.stringify(req.url === '/version' ? { major: '1', minor: '30', gitVersion: 'v1.30.14' } : { resources: [] }));
    });
    // A long start-up deadline: the refusal must not wait for it.
    const config = { ...testManagerConfig({ cacheSyncTimeoutMs: 60_000 }), minimumKubernetes: MINIMUM_KUBERNETES };
    const manager = new Manager(config, { rest }, runnableControllers(testSettings()));
    t.after(() => {
      for (const c of manager.controllers) c.queue.shutDown();
    });
    const err = await manager.run(new AbortController().signal).then(
      () => assert.fail('must not start'),
      (e: unknown) => e,
    );
    assert.ok(err instanceof UnsupportedServerError, `refused, not timed out: ${String(err)}`);
    assert.match(err.message, new RegExp(`Kubernetes v1\\.30\\.14, older than ${MINIMUM_KUBERNETES.replace('.', '\\.')},`));
    assert.equal(asked.filter((url) => url === '/version').length, 1, `asked once, never retried: ${asked.join(', ')}`);
    // Discovery goes out beside /version (one round trip); nothing of a cache or a lease does.
    assert.deepEqual(
      asked.filter((url) => url !== '/version' && !/^\/apis?\/[^/]+(\/[^/]+)?$/.test(url)),
      [],
      `only the version and discovery were asked: ${asked.join(', ')}`,
    );
  });
});
