/**
 * The informer against a real API server: a paginated LIST, then WATCH events, with the cache
 * trimmed by the default transform.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RestClient, loadKubeConfig, resourcePath, type ResourceType } from '../../src/kube/index.js';
import type { KubeObject } from '../../src/runtime/cache/index.js';
import {
  Informer,
  LAST_APPLIED_ANNOTATION,
  kubeListerWatcher,
  nopInformerMetrics,
  type InformerMetrics,
} from '../../src/runtime/informer/index.js';
import { eventually, testNamespace } from '../support/kube.js';

const CONFIGMAPS: ResourceType = { group: '', version: 'v1', resource: 'configmaps', kind: 'ConfigMap', namespaced: true };
const COUNT = 120;
const PAGE = 50;

interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
}

/** Runs fn over items, at most `width` at a time. */
async function pool<T>(items: T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  const queue = [...items];
  await Promise.all(
    Array.from({ length: width }, async () => {
      for (let item = queue.shift(); item !== undefined; item = queue.shift()) await fn(item);
    }),
  );
}

test('an informer lists 120 ConfigMaps in pages of 50, then sees an update and a delete', { timeout: 120_000 }, async (t) => {
  const ns = testNamespace(t, 'informer');
  const rest = new RestClient(loadKubeConfig(process.env.KUBECONFIG));
  t.after(() => rest.close());
  const path = resourcePath(CONFIGMAPS, ns);
  const names = Array.from({ length: COUNT }, (_, i) => `cm-${String(i).padStart(3, '0')}`);
  let created: ConfigMap | undefined;
  await pool(names, 16, async (name) => {
    created = await rest.request<ConfigMap>('POST', path, {
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name, annotations: { [LAST_APPLIED_ANNOTATION]: '{"kind":"ConfigMap"}', keep: 'me' } },
        data: { n: name },
      },
    });
  });
  assert.ok(created?.metadata?.managedFields?.length, 'the server sends managedFields, so their absence below means something');

  const listRequests = { n: 0 };
  const metrics: InformerMetrics = { ...nopInformerMetrics, listRequest: () => void listRequests.n++ };
  const informer = new Informer<ConfigMap>({
    name: 'configmaps',
    listerWatcher: kubeListerWatcher<ConfigMap>(rest, CONFIGMAPS, { namespace: ns }),
    pageSize: PAGE,
    metrics,
  });
  const events: string[] = [];
  informer.addEventHandler({
    onAdd: (o) => events.push(`add ${o.metadata?.name}`),
    onUpdate: (a, b) => events.push(`update ${b.metadata?.name} ${a.data?.n}->${b.data?.n}`),
    onDelete: (o) => events.push(`delete ${o.metadata?.name}`),
  });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  t.after(() => stop.abort());

  assert.equal(await informer.waitForSync(AbortSignal.timeout(60_000)), true, 'synced');
  const cached = informer.store;
  for (const name of names) assert.ok(cached.get(`${ns}/${name}`), `${name} is cached`);
  // The namespace may also hold kube-root-ca.crt, published by the controller manager.
  assert.ok(cached.size >= COUNT);
  assert.equal(listRequests.n, Math.ceil(cached.size / PAGE), `listed in pages of ${PAGE}`);
  assert.ok(listRequests.n >= 3);
  const listedAtSync = listRequests.n;
  assert.equal(events.filter((e) => e.startsWith('add cm-')).length, COUNT);

  const sample = cached.get(`${ns}/cm-007`)!;
  assert.equal(sample.metadata?.managedFields, undefined, 'managedFields dropped');
  assert.deepEqual(sample.metadata?.annotations, { keep: 'me' }, 'last-applied-configuration dropped');
  assert.equal(sample.kind, 'ConfigMap', 'listed items carry their kind');
  assert.ok(cached.list().every((o) => o.metadata?.managedFields === undefined));

  await eventually('the watch to be open', () => informer.status.watching, 10_000);
  events.length = 0;
  await rest.request('PATCH', `${path}/cm-007`, {
    body: { data: { n: 'changed' } },
    contentType: 'application/merge-patch+json',
  });
  await rest.request('DELETE', `${path}/cm-100`);

  await eventually(
    'the update and the delete to arrive',
    () => events.includes('update cm-007 cm-007->changed') && events.includes('delete cm-100'),
    20_000,
  );
  assert.equal(cached.get(`${ns}/cm-007`)?.data?.n, 'changed');
  assert.equal(cached.get(`${ns}/cm-007`)?.metadata?.managedFields, undefined, 'watched objects are trimmed too');
  assert.equal(cached.get(`${ns}/cm-100`), undefined);
  assert.ok(!events.some((e) => e.startsWith('add ')), 'no spurious adds (no re-list)');
  assert.equal(listRequests.n, listedAtSync, 'no further list');

  stop.abort();
  await running;
  assert.equal(informer.state, 'stopped');
  assert.equal(informer.status.watching, false);
});
