import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  CONTROLLER_OWNER_INDEX,
  NAMESPACE_INDEX,
  Store,
  controllerOf,
  controllerOwnerKey,
  objectKey,
  type KubeObject,
  type OwnerReference,
} from '../../src/runtime/cache/index.js';

interface Obj extends KubeObject {
  data?: Record<string, string>;
}

function owner(uid: string, controller = true): OwnerReference {
  return { apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', name: `echo-${uid}`, uid, controller };
}

function obj(name: string, rv = '1', opts: { ns?: string | null; owners?: OwnerReference[]; labels?: Record<string, string> } = {}): Obj {
  const ns = opts.ns === null ? undefined : (opts.ns ?? 'default');
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name, ...(ns ? { namespace: ns } : {}), resourceVersion: rv, ownerReferences: opts.owners, labels: opts.labels },
  };
}

/** The index value for dependents in `ns` of the owner with `uid`. */
const own = (uid: string, ns = 'default'): string => controllerOwnerKey(ns, uid);
const sorted = (xs: string[]): string[] => [...xs].sort();
const names = (xs: Obj[]): string[] => sorted(xs.map((o) => o.metadata!.name!));

describe('object keys', () => {
  it('are namespace/name, or name for cluster-scoped objects', () => {
    assert.equal(objectKey(obj('a', '1', { ns: 'ns1' })), 'ns1/a');
    assert.equal(objectKey(obj('node-1', '1', { ns: null })), 'node-1');
  });

  it('refuse an object without a name', () => {
    assert.throws(() => objectKey({ metadata: { namespace: 'x' } }), /metadata.name/);
  });

  it('controllerOf picks the ownerReference with controller: true only', () => {
    assert.equal(controllerOf(obj('a', '1', { owners: [owner('u1', false), owner('u2')] }))?.uid, 'u2');
    assert.equal(controllerOf(obj('a', '1', { owners: [owner('u1', false)] })), undefined);
  });
});

describe('Store', () => {
  it('adds, gets, lists, replaces and deletes by key or object', () => {
    const store = new Store<Obj>();
    assert.equal(store.add(obj('a')), undefined);
    store.add(obj('b', '1', { ns: 'other' }));
    assert.equal(store.size, 2);
    assert.deepEqual(sorted(store.keys()), ['default/a', 'other/b']);
    assert.equal(store.get('default/a')?.metadata?.resourceVersion, '1');

    const previous = store.add(obj('a', '2'));
    assert.equal(previous?.metadata?.resourceVersion, '1', 'add returns the replaced version');
    assert.equal(store.get('default/a')?.metadata?.resourceVersion, '2');
    assert.equal(store.size, 2);

    assert.equal(store.delete('default/a')?.metadata?.resourceVersion, '2');
    assert.equal(store.delete(obj('b', '9', { ns: 'other' }))?.metadata?.name, 'b');
    assert.equal(store.delete('default/missing'), undefined);
    assert.equal(store.size, 0);
    assert.deepEqual(store.list(), []);
  });

  it('indexes by namespace, leaving cluster-scoped objects out', () => {
    const store = new Store<Obj>();
    store.add(obj('a', '1', { ns: 'ns1' }));
    store.add(obj('b', '1', { ns: 'ns1' }));
    store.add(obj('c', '1', { ns: 'ns2' }));
    store.add(obj('node', '1', { ns: null }));
    assert.deepEqual(names(store.byIndex(NAMESPACE_INDEX, 'ns1')), ['a', 'b']);
    assert.deepEqual(names(store.byIndex(NAMESPACE_INDEX, 'ns2')), ['c']);
    assert.deepEqual(sorted(store.indexValues(NAMESPACE_INDEX)), ['ns1', 'ns2']);
    assert.deepEqual(store.byIndex(NAMESPACE_INDEX, 'nope'), []);
  });

  it('indexes by controller owner UID, ignoring non-controller owners', () => {
    const store = new Store<Obj>();
    store.add(obj('job-1', '1', { owners: [owner('echo-uid-1')] }));
    store.add(obj('job-2', '1', { owners: [owner('echo-uid-1')] }));
    store.add(obj('job-3', '1', { owners: [owner('echo-uid-2', false)] }));
    store.add(obj('job-4'));
    assert.deepEqual(names(store.byIndex(CONTROLLER_OWNER_INDEX, own('echo-uid-1'))), ['job-1', 'job-2']);
    assert.deepEqual(store.byIndex(CONTROLLER_OWNER_INDEX, own('echo-uid-2')), []);
    assert.deepEqual(store.indexKeys(CONTROLLER_OWNER_INDEX, own('echo-uid-1')).sort(), ['default/job-1', 'default/job-2']);
    assert.deepEqual(store.indexValues(CONTROLLER_OWNER_INDEX), ['default/echo-uid-1']);
  });

  it("keys the controller-owner index by the dependent's namespace and the owner's UID", () => {
    const store = new Store<Obj>();
    store.add(obj('run', '1', { ns: 'b', owners: [owner('echo-uid')] }));
    store.add(obj('planted', '1', { ns: 'a', owners: [owner('echo-uid')] }));
    assert.deepEqual(store.indexKeys(CONTROLLER_OWNER_INDEX, controllerOwnerKey('b', 'echo-uid')), ['b/run']);
    assert.deepEqual(store.indexKeys(CONTROLLER_OWNER_INDEX, controllerOwnerKey('a', 'echo-uid')), ['a/planted']);
    assert.deepEqual(store.byIndex(CONTROLLER_OWNER_INDEX, 'echo-uid'), [], 'a UID alone finds nothing');
    store.add(obj('node-lease', '1', { ns: null, owners: [owner('node-uid')] }));
    assert.deepEqual(store.indexKeys(CONTROLLER_OWNER_INDEX, controllerOwnerKey(undefined, 'node-uid')), ['node-lease']);
  });

  it('moves the index entry when the controller owner changes, and drops emptied buckets', () => {
    const store = new Store<Obj>();
    store.add(obj('job', '1', { owners: [owner('old-owner')] }));
    store.add(obj('job', '2', { owners: [owner('new-owner')] }));
    assert.deepEqual(store.byIndex(CONTROLLER_OWNER_INDEX, own('old-owner')), []);
    assert.deepEqual(names(store.byIndex(CONTROLLER_OWNER_INDEX, own('new-owner'))), ['job']);
    assert.equal(
      store.byIndex(CONTROLLER_OWNER_INDEX, own('new-owner'))[0]?.metadata?.resourceVersion,
      '2',
      'the index serves the new version',
    );
    assert.deepEqual(store.indexValues(CONTROLLER_OWNER_INDEX), ['default/new-owner'], 'no empty bucket left behind');

    store.add(obj('job', '3'));
    assert.deepEqual(store.indexValues(CONTROLLER_OWNER_INDEX), [], 'losing the owner removes the entry');
    store.add(obj('job', '4', { owners: [owner('x')] }));
    store.delete('default/job');
    assert.deepEqual(store.byIndex(CONTROLLER_OWNER_INDEX, own('x')), []);
    assert.deepEqual(store.indexValues(CONTROLLER_OWNER_INDEX), []);
    assert.deepEqual(store.indexValues(NAMESPACE_INDEX), []);
  });

  it('serves custom indexers, also ones added after objects were stored', () => {
    const byApp = (o: Obj): string[] => (o.metadata?.labels?.app ? [o.metadata.labels.app] : []);
    const store = new Store<Obj>({ indexers: { app: byApp } });
    store.add(obj('a', '1', { labels: { app: 'web', tier: 'front' } }));
    store.add(obj('b', '1', { labels: { app: 'db', tier: 'back' } }));
    assert.deepEqual(names(store.byIndex('app', 'web')), ['a']);

    store.addIndexers({ tier: (o) => (o.metadata?.labels?.tier ? [o.metadata.labels.tier] : []) });
    assert.deepEqual(names(store.byIndex('tier', 'back')), ['b'], 'existing objects are indexed at once');
    store.add(obj('a', '2', { labels: { app: 'web', tier: 'back' } }));
    assert.deepEqual(names(store.byIndex('tier', 'back')), ['a', 'b']);
    assert.deepEqual(store.byIndex('tier', 'front'), []);
  });

  it('supports multi-valued index functions', () => {
    const store = new Store<Obj>({ indexers: { labels: (o) => Object.keys(o.metadata?.labels ?? {}) } });
    store.add(obj('a', '1', { labels: { x: '1', y: '1' } }));
    store.add(obj('a', '2', { labels: { y: '1', z: '1' } }));
    assert.deepEqual(store.byIndex('labels', 'x'), []);
    assert.deepEqual(names(store.byIndex('labels', 'y')), ['a']);
    assert.deepEqual(names(store.byIndex('labels', 'z')), ['a']);
  });

  it('rejects a duplicate indexer name and an unknown index', () => {
    const store = new Store<Obj>();
    assert.throws(() => store.addIndexers({ [NAMESPACE_INDEX]: () => [] }), /already exists/);
    assert.throws(() => store.byIndex('nope', 'x'), /no index named nope/);
  });

  it('leaves itself unchanged when an index function throws', () => {
    let explode = false;
    const fragile = (o: Obj): string[] => {
      if (explode) throw new Error('index function bug');
      return [o.metadata!.name!];
    };
    const store = new Store<Obj>({ indexers: { fragile } });
    store.add(obj('a', '1', { owners: [owner('u1')] }));
    explode = true;
    assert.throws(() => store.add(obj('a', '2', { owners: [owner('u2')] })));
    assert.equal(store.get('default/a')?.metadata?.resourceVersion, '1');
    assert.deepEqual(names(store.byIndex(CONTROLLER_OWNER_INDEX, own('u1'))), ['a'], 'no index moved either');
    assert.deepEqual(store.byIndex(CONTROLLER_OWNER_INDEX, own('u2')), []);
    assert.throws(() => store.delete('default/a'));
    assert.equal(store.size, 1);
  });

  describe('replace', () => {
    it('reports added, updated (old and new) and deleted (last known) objects', () => {
      const store = new Store<Obj>();
      const keep = obj('keep', '1');
      store.add(keep);
      store.add(obj('change', '1'));
      store.add(obj('gone', '3', { owners: [owner('u-gone')] }));
      const result = store.replace([obj('keep', '1'), obj('change', '2'), obj('new', '5')], '100');

      assert.deepEqual(names(result.added), ['new']);
      assert.equal(result.updated.length, 1);
      assert.equal(result.updated[0]!.oldObj.metadata?.resourceVersion, '1');
      assert.equal(result.updated[0]!.newObj.metadata?.resourceVersion, '2');
      assert.deepEqual(names(result.deleted), ['gone']);
      assert.equal(result.deleted[0]!.metadata?.resourceVersion, '3', 'the last known version');

      assert.deepEqual(sorted(store.keys()), ['default/change', 'default/keep', 'default/new']);
      assert.equal(store.get('default/keep'), keep, 'an unchanged object keeps its instance');
      assert.equal(store.get('default/change')?.metadata?.resourceVersion, '2');
      assert.equal(store.resourceVersion, '100');
      assert.deepEqual(store.byIndex(CONTROLLER_OWNER_INDEX, own('u-gone')), [], 'the vanished object left the indexes');
    });

    it('maintains indexes for replaced objects', () => {
      const store = new Store<Obj>();
      store.add(obj('job', '1', { ns: 'a', owners: [owner('o1')] }));
      store.replace([obj('job', '2', { ns: 'a', owners: [owner('o2')] }), obj('job2', '1', { ns: 'b', owners: [owner('o1')] })], '7');
      assert.deepEqual(store.indexKeys(CONTROLLER_OWNER_INDEX, own('o1', 'b')), ['b/job2']);
      assert.deepEqual(store.indexKeys(CONTROLLER_OWNER_INDEX, own('o1', 'a')), []);
      assert.deepEqual(store.indexKeys(CONTROLLER_OWNER_INDEX, own('o2', 'a')), ['a/job']);
      assert.deepEqual(sorted(store.indexValues(NAMESPACE_INDEX)), ['a', 'b']);
    });

    it('empties the store on an empty list, reporting every object deleted', () => {
      const store = new Store<Obj>();
      store.add(obj('a'));
      store.add(obj('b'));
      const result = store.replace([], '9');
      assert.deepEqual(names(result.deleted), ['a', 'b']);
      assert.equal(store.size, 0);
      assert.deepEqual(store.indexValues(NAMESPACE_INDEX), []);
    });

    it('keeps the later of two listed objects with the same key', () => {
      const store = new Store<Obj>();
      const result = store.replace([obj('a', '1'), obj('a', '2')], '3');
      assert.equal(result.added.length, 1);
      assert.equal(store.get('default/a')?.metadata?.resourceVersion, '2');
    });
  });
});
