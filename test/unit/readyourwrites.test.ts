import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ReadYourWrites, Store, compareResourceVersions, type KubeObject } from '../../src/runtime/cache/index.js';

type Obj = KubeObject & { status?: string };

function obj(rv: string, status?: string, uid = 'u1'): Obj {
  return { metadata: { namespace: 'ns', name: 'a', uid, resourceVersion: rv }, status };
}

/** A store with the informer's event fan-out, as the Manager wires it. */
function setup() {
  const store = new Store<Obj>();
  const handlers: { onAdd?(o: Obj): void; onUpdate?(a: Obj, b: Obj): void; onDelete?(o: Obj): void }[] = [];
  const events = { addEventHandler: (h: (typeof handlers)[number]) => void handlers.push(h) };
  const ryw = new ReadYourWrites<Obj>(store, events);
  const informer = {
    add(o: Obj) {
      store.add(o);
      for (const h of handlers) h.onAdd?.(o);
    },
    update(o: Obj) {
      const old = store.get('ns/a')!;
      store.add(o);
      for (const h of handlers) h.onUpdate?.(old, o);
    },
    delete(o: Obj) {
      store.delete(o);
      for (const h of handlers) h.onDelete?.(o);
    },
  };
  return { store, ryw, informer };
}

describe('ReadYourWrites', () => {
  it('orders resourceVersions as integers, and refuses to order anything else', () => {
    assert.equal(compareResourceVersions('9', '10'), -1);
    assert.equal(compareResourceVersions('10', '10'), 0);
    assert.equal(compareResourceVersions('18446744073709551617', '18446744073709551616'), 1);
    assert.equal(compareResourceVersions('abc', '10'), undefined);
    assert.equal(compareResourceVersions(undefined, '10'), undefined);
  });

  it('returns our written copy while the cache is older, then the cache once it caught up', () => {
    const { ryw, informer } = setup();
    informer.add(obj('5'));
    ryw.wrote(obj('7', 'ours'));
    assert.equal(ryw.get('ns/a')?.status, 'ours', 'not the older cached copy');
    informer.update(obj('6', 'someone else, before us'));
    assert.equal(ryw.get('ns/a')?.status, 'ours');
    informer.update(obj('7', 'ours, from the watch'));
    assert.equal(ryw.pending, 0, 'dropped when the watch delivered our write');
    assert.equal(ryw.get('ns/a')?.status, 'ours, from the watch');
    informer.update(obj('9', 'newer'));
    assert.equal(ryw.get('ns/a')?.status, 'newer');
  });

  it('never goes back to an older write of ours, and a newer cache wins over our write', () => {
    const { ryw, informer } = setup();
    informer.add(obj('5'));
    ryw.wrote(obj('8', 'second'));
    ryw.wrote(obj('7', 'first, answered late'));
    assert.equal(ryw.get('ns/a')?.status, 'second');
    informer.update(obj('10', 'newer than ours'));
    assert.equal(ryw.get('ns/a')?.status, 'newer than ours');
  });

  it('does not revive a deleted object, nor hide a re-created one', () => {
    const { ryw, informer } = setup();
    informer.add(obj('5'));
    ryw.wrote(obj('7', 'ours'));
    informer.delete(obj('5'));
    assert.equal(ryw.get('ns/a'), undefined);
    assert.equal(ryw.pending, 0);
    ryw.wrote(obj('7', 'ours'));
    informer.add(obj('3', 'another object of that name', 'u2'));
    assert.equal(ryw.get('ns/a')?.status, 'another object of that name');
  });

  it('uses the cache when resourceVersions cannot be ordered', () => {
    const { ryw, informer } = setup();
    informer.add(obj('x5', 'cached'));
    ryw.wrote(obj('x7', 'ours'));
    assert.equal(ryw.get('ns/a')?.status, 'cached');
  });
});
