/**
 * The runtime's test kit (src/runtime/testing): the fake client answers as the API server does
 * (resourceVersions, preconditions, 404, 409, server-side apply, merge patches), and the fake
 * cache follows it as an informer would.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { isAlreadyExists, isConflict, isNotFound } from '../../src/kube/errors.js';
import { CONFIGMAPS } from '../../src/kube/resources.js';
import { CONTROLLER_OWNER_INDEX, controllerOwnerKey } from '../../src/runtime/cache/index.js';
import { FakeCache, FakeClient, mergePatch } from '../../src/runtime/testing/index.js';

const cm = (name: string, data: Record<string, string>, extra: V1ConfigMap['metadata'] = {}): V1ConfigMap => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'ns', ...extra },
  data,
});
const key = { namespace: 'ns', name: 'a' };

describe('FakeClient', () => {
  it('gives every write a greater resourceVersion, a uid on create, and records the writes it accepts', async () => {
    const client = new FakeClient();
    const created = await client.create(CONFIGMAPS, cm('a', { x: '1' }));
    const patched = await client.patch(CONFIGMAPS, key, { data: { y: '2' } });
    assert.ok(created.metadata?.uid);
    assert.ok(Number(patched.metadata!.resourceVersion) > Number(created.metadata.resourceVersion));
    assert.deepEqual(patched.data, { x: '1', y: '2' });
    await assert.rejects(client.create(CONFIGMAPS, cm('a', {})), isAlreadyExists);
    await assert.rejects(client.get(CONFIGMAPS, { namespace: 'ns', name: 'b' }), isNotFound);
    assert.deepEqual(
      client.writes.map((w) => w.verb),
      ['create', 'patch'],
    );
  });

  it('refuses a stale resourceVersion or another uid with 409 and changes nothing', async () => {
    const client = new FakeClient();
    const a = await client.create(CONFIGMAPS, cm('a', { x: '1' }));
    await assert.rejects(client.patch(CONFIGMAPS, key, { data: { x: '2' } }, { resourceVersion: '1' }), isConflict);
    await assert.rejects(client.delete(CONFIGMAPS, key, { preconditions: { uid: 'other' } }), isConflict);
    await assert.rejects(client.apply(CONFIGMAPS, cm('a', {}, { uid: 'other' }), { fieldManager: 'm', force: true }), isConflict);
    assert.deepEqual(client.stored(CONFIGMAPS, 'ns/a'), a);
    await client.delete(CONFIGMAPS, key, { preconditions: { uid: a.metadata!.uid } });
    assert.equal(client.stored(CONFIGMAPS, 'ns/a'), undefined);
  });

  it('server-side apply creates, then merges top-level fields and metadata key by key', async () => {
    const client = new FakeClient();
    await client.apply(CONFIGMAPS, cm('a', { x: '1' }, { labels: { l: '1' } }), { fieldManager: 'm', force: false });
    const merged = await client.apply(
      CONFIGMAPS,
      { ...cm('a', {}, { annotations: { n: '1' } }), immutable: true },
      { fieldManager: 'm', force: true },
    );
    assert.deepEqual(merged.metadata?.labels, { l: '1' });
    assert.deepEqual(merged.metadata?.annotations, { n: '1' });
    assert.equal(merged.immutable, true);
    assert.deepEqual(mergePatch({ a: { b: 1, c: 2 }, d: 1 }, { a: { c: null }, d: [1] }), { a: { b: 1 }, d: [1] });
  });

  it('the fake cache follows the client as an informer would, indexed by controller owner', async () => {
    const client = new FakeClient();
    const owner = { apiVersion: 'v1', kind: 'X', name: 'o', uid: 'owner-uid', controller: true };
    await client.create(CONFIGMAPS, cm('a', {}, { ownerReferences: [owner] }));
    const cache = new FakeCache<V1ConfigMap>({ filter: (o) => o.metadata?.name !== 'hidden' });
    await client.create(CONFIGMAPS, cm('hidden', {}));
    cache.syncFrom(client, CONFIGMAPS);
    assert.deepEqual(
      cache.byIndex(CONTROLLER_OWNER_INDEX, controllerOwnerKey('ns', 'owner-uid')).map((o) => o.metadata?.name),
      ['a'],
    );
    assert.equal(cache.get('ns/hidden'), undefined);
    client.remove(CONFIGMAPS, 'ns/a');
    cache.syncFrom(client, CONFIGMAPS);
    assert.equal(cache.get('ns/a'), undefined);
  });
});
