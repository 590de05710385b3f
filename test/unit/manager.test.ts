/**
 * The controller builder and the manager's wiring of declarations: which caches a reconciler is
 * given, which are shared, what is refused at construction, which events wake which keys
 * (owned, watched through a map, filtered by predicates). (Running controllers against a real
 * API server is the e2e suites' part.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ConfigMap } from '@kubernetes/client-node';
import { CONTROLLERS, runnableControllers } from '../../src/controllers/index.js';
import type { RestClient } from '../../src/kube/rest.js';
import { apiVersionOf, CONFIGMAPS, CRONJOBS, JOBS, type ResourceType } from '../../src/kube/resources.js';
import { Manager, type ManagerConfig } from '../../src/manager/manager.js';
import type { KubeObject, ObjectCache } from '../../src/runtime/cache/index.js';
import {
  controllerFor,
  generationChangedOrDeleted,
  type ControllerCaches,
  type RunnableController,
} from '../../src/runtime/controller/index.js';
import { nopInformerMetrics } from '../../src/runtime/informer/index.js';
import { eventually } from '../support/eventually.js';
import { testManagerConfig, testSettings } from '../support/manager.js';

const WIDGETS: ResourceType = { group: 'example.test', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
const GADGETS: ResourceType = { group: 'example.test', version: 'v1', resource: 'gadgets', kind: 'Gadget', namespaced: true };

const config: ManagerConfig = testManagerConfig();
/** Constructing a manager sends no request: informers list and watch only when it runs. */
const rest = { server: 'https://api.example.test' } as unknown as RestClient;

/** A declaration that hands its caches to `seen` when the manager builds its reconciler. */
function capturing(
  primary: ResourceType,
  owned: ResourceType[],
  seen: ControllerCaches<KubeObject>[],
  transform?: (o: KubeObject) => KubeObject,
) {
  const builder = controllerFor<KubeObject>(primary);
  for (const type of owned) builder.owns(type, { labelSelector: 'app=x', writes: ['create'], transform });
  return builder
    .complete(({ caches }) => {
      seen.push(caches);
      return { reconcile: () => Promise.resolve(undefined) };
    })
    .withContext();
}

describe('controller builder', () => {
  it('names a controller after its primary kind unless named, and refuses declaring a type twice', () => {
    assert.equal(controllerFor(WIDGETS).complete(() => ({ reconcile: () => Promise.resolve(undefined) })).name, 'widget');
    assert.equal(
      controllerFor(WIDGETS)
        .named('w')
        .complete(() => ({ reconcile: () => Promise.resolve(undefined) })).name,
      'w',
    );
    assert.throws(
      () =>
        controllerFor(WIDGETS)
          .owns(JOBS, { writes: [] })
          .owns(JOBS, { writes: ['delete'] }),
      /Job is declared twice/,
    );
    assert.throws(
      () =>
        controllerFor(WIDGETS)
          .owns(JOBS, { writes: [] })
          .watches(JOBS, () => []),
      /Job is declared twice/,
    );
  });
});

describe('manager wiring', () => {
  it('builds one controller per declaration, named as declared', () => {
    const manager = new Manager(config, { rest }, runnableControllers(testSettings()));
    assert.deepEqual(
      manager.controllers.map((c) => c.name),
      CONTROLLERS.map((d) => d.name),
    );
  });

  it('has queued work while any controller has a key waiting (what Events yield to)', () => {
    const manager = new Manager(config, { rest }, runnableControllers(testSettings()));
    assert.equal(manager.hasQueuedWork(), false);
    manager.controllers.at(-1)!.enqueue('ns/name');
    assert.equal(manager.hasQueuedWork(), true);
    for (const c of manager.controllers) c.queue.shutDown();
  });

  it('shares one cache per owned type between controllers, and gives each its primary with read-your-writes', () => {
    const seen: ControllerCaches<KubeObject>[] = [];
    new Manager(config, { rest }, [capturing(WIDGETS, [JOBS], seen), capturing(GADGETS, [JOBS], seen)]);
    const [widgets, gadgets] = seen;
    assert.ok(widgets && gadgets);
    assert.equal(widgets.owned(JOBS), gadgets.owned(JOBS), 'one Jobs cache for both');
    assert.notEqual(widgets.primary, gadgets.primary);
    assert.equal(typeof widgets.primary.wrote, 'function', 'the primary remembers our writes');
    const jobs: ObjectCache<KubeObject> = widgets.owned(JOBS);
    assert.equal(jobs.get('ns/none'), undefined);
  });

  it('refuses an owned type declared with two different transforms, and a reconciler reading a type it does not own', () => {
    const seen: ControllerCaches<KubeObject>[] = [];
    const strip = (o: KubeObject): KubeObject => o;
    const keep = (o: KubeObject): KubeObject => ({ ...o });
    assert.throws(
      () => new Manager(config, { rest }, [capturing(WIDGETS, [JOBS], seen, strip), capturing(GADGETS, [JOBS], seen, keep)]),
      /Job is declared with two different cache transforms/,
    );
    new Manager(config, { rest }, [capturing(WIDGETS, [JOBS], seen)]);
    assert.throws(() => seen.at(-1)!.owned(CRONJOBS), /controller widget reads CronJob, which it does not own/);
  });

  it("caches the primary through its declared transform, and remembers our writes transformed (the writer's object stays whole)", async () => {
    const annotated = (rv: string): KubeObject => ({
      apiVersion: 'example.test/v1',
      kind: 'Widget',
      metadata: { name: 'w1', namespace: 'ns', uid: 'u1', resourceVersion: rv, labels: { a: 'b' }, annotations: { big: 'x'.repeat(1000) } },
    });
    const served = new AbortController();
    const fake = new MemoryApi({ widgets: [annotated('5')] });
    const dropAnnotations = (o: KubeObject): KubeObject => {
      const { annotations: _dropped, ...kept } = o.metadata!;
      o.metadata = kept;
      return o;
    };
    const seen: ControllerCaches<KubeObject>[] = [];
    const declaration = controllerFor<KubeObject>(WIDGETS, { transform: dropAnnotations }).complete(({ caches }) => {
      seen.push(caches);
      return { reconcile: () => Promise.resolve(undefined) };
    });
    assert.equal(declaration.primaryTransform, dropAnnotations, 'the declaration carries the transform');
    const manager = new Manager(config, { rest: fake.rest }, [declaration.withContext()]);
    const running = manager.run(served.signal);
    try {
      await until(() => manager.hasSynced());
      assert.deepEqual(fake.asked, ['/apis/example.test/v1'], 'only the preflight asks anything but lists and watches');
      const primary = seen[0]!.primary;
      assert.deepEqual(primary.get('ns/w1')?.metadata, {
        name: 'w1',
        namespace: 'ns',
        uid: 'u1',
        resourceVersion: '5',
        labels: { a: 'b' },
      });
      const written = annotated('6');
      primary.wrote!(written);
      assert.equal(primary.get('ns/w1')?.metadata?.resourceVersion, '6', 'our newer write is what get() returns');
      assert.equal(primary.get('ns/w1')?.metadata?.annotations, undefined, 'remembered transformed');
      assert.equal(written.metadata?.annotations?.big?.length, 1000, "the writer's object is left whole");
    } finally {
      served.abort();
      await running;
    }
  });

  it('builds one cache per declared type and selector, whichever controllers declare it', () => {
    const informers: string[] = [];
    new Manager(
      config,
      { rest, informerMetrics: (name) => (informers.push(name), nopInformerMetrics) },
      runnableControllers(testSettings()),
    );
    const declared = new Set(CONTROLLERS.flatMap((d) => [d.primary, ...d.owned.map((o) => o.type), ...d.watched.map((w) => w.type)]));
    assert.deepEqual(informers.sort(), [...declared].map((t) => t.resource).sort());
  });
});

describe('manager: watches and event filters', () => {
  const W1: KubeObject = {
    apiVersion: apiVersionOf(WIDGETS),
    kind: WIDGETS.kind,
    metadata: { name: 'w1', namespace: 'ns', uid: 'wu', generation: 1, resourceVersion: '1' },
  };
  const G1: KubeObject = {
    apiVersion: apiVersionOf(GADGETS),
    kind: GADGETS.kind,
    metadata: { name: 'g1', namespace: 'ns', uid: 'gu', generation: 1, resourceVersion: '1' },
  };
  const configMap = (widget: string, resourceVersion: string): V1ConfigMap => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'settings', namespace: 'ns', resourceVersion },
    data: { widget },
  });

  it('a watched kind wakes the primaries its map names (old and new), from one informer shared by the controllers that watch it', async () => {
    const api = new MemoryApi({ widgets: [], gadgets: [], configmaps: [configMap('w1', '1')] });
    const { reconciled, declare } = recorder();
    const toWidget = (cm: V1ConfigMap): string[] => (cm.data?.widget ? [`${cm.metadata!.namespace}/${cm.data.widget}`] : []);
    let watchedCache: ObjectCache<V1ConfigMap> | undefined;
    const widgets = declare(controllerFor(WIDGETS).watches(CONFIGMAPS, toWidget), (caches) => {
      watchedCache = caches.watched(CONFIGMAPS);
    });
    const gadgets = declare(controllerFor(GADGETS).watches(CONFIGMAPS, () => ['ns/g9']));
    const informers: string[] = [];
    await running(api, [widgets, gadgets], informers, async () => {
      await until(() => reconciled.includes('widget ns/w1') && reconciled.includes('gadget ns/g9'));
      assert.equal(watchedCache?.get('ns/settings')?.data?.widget, 'w1', 'the watched cache, typed');
      await api.send('configmaps', 'MODIFIED', configMap('w2', '2'));
      await until(() => reconciled.filter((r) => r === 'widget ns/w1').length === 2 && reconciled.includes('widget ns/w2'));
    });
    assert.deepEqual(
      informers.filter((n) => n === 'configmaps'),
      ['configmaps'],
      'one ConfigMaps informer for both',
    );
  });

  it('a controller of a built-in kind: For(ConfigMap) asks the core API in its preflight, and reconciles ConfigMaps', async () => {
    const api = new MemoryApi({ configmaps: [configMap('w1', '1')] });
    const { reconciled, declare } = recorder();
    await running(api, [declare(controllerFor(CONFIGMAPS))], [], async () => {
      await until(() => reconciled.includes('configmap ns/settings'));
    });
    assert.deepEqual(api.asked, ['/api/v1']);
  });

  it("a primary's event filter drops the updates it refuses; without one every update wakes the controller", async () => {
    const api = new MemoryApi({ widgets: [W1], gadgets: [G1] });
    const { reconciled, declare } = recorder();
    const filtered = declare(controllerFor(WIDGETS).withEventFilter(generationChangedOrDeleted));
    const unfiltered = declare(controllerFor(GADGETS));
    await running(api, [filtered, unfiltered], [], async () => {
      await until(() => reconciled.includes('widget ns/w1') && reconciled.includes('gadget ns/g1'));
      const statusOnly = (o: KubeObject): KubeObject =>
        ({ ...o, metadata: { ...o.metadata, resourceVersion: '2' }, status: { seen: true } }) as KubeObject;
      await api.send('widgets', 'MODIFIED', statusOnly(W1));
      await api.send('gadgets', 'MODIFIED', statusOnly(G1));
      await until(() => reconciled.filter((r) => r === 'gadget ns/g1').length === 2);
      // A marker after it on the same watch: one worker takes keys in order, so once the marker
      // is reconciled, a w1 the status-only update had queued would have been reconciled before.
      await api.send('widgets', 'ADDED', { ...W1, metadata: { ...W1.metadata, name: 'marker', uid: 'mu', resourceVersion: '3' } });
      await until(() => reconciled.includes('widget ns/marker'));
      assert.equal(config.workers, 1, 'one worker: keys are reconciled in the order they were queued');
      assert.equal(reconciled.filter((r) => r === 'widget ns/w1').length, 1, 'a status-only update is filtered out');
      await api.send('widgets', 'MODIFIED', { ...W1, metadata: { ...W1.metadata, resourceVersion: '4', generation: 2 } });
      await until(() => reconciled.filter((r) => r === 'widget ns/w1').length === 2);
    });
  });
});

async function until(condition: () => boolean, timeoutMs = 5000): Promise<void> {
  await eventually('the condition', condition, timeoutMs, 5);
}

/** Declarations whose reconcilers record `<controller> <key>` for each key they are given. */
function recorder() {
  const reconciled: string[] = [];
  const declare = <P extends KubeObject>(
    builder: ReturnType<typeof controllerFor<P>>,
    withCaches: (caches: ControllerCaches<P>) => void = () => undefined,
  ): RunnableController => {
    const declaration = builder.complete(({ caches }) => {
      withCaches(caches);
      return { reconcile: (key) => Promise.resolve(void reconciled.push(`${declaration.name} ${key}`)) };
    });
    return declaration.withContext();
  };
  return { reconciled, declare };
}

/** Runs a manager over `api` while `body` runs, then stops it; informers' names go to `informers`. */
async function running(api: MemoryApi, controllers: RunnableController[], informers: string[], body: () => Promise<void>): Promise<void> {
  const stop = new AbortController();
  const manager = new Manager(
    config,
    { rest: api.rest, informerMetrics: (name) => (informers.push(name), nopInformerMetrics) },
    controllers,
  );
  const run = manager.run(stop.signal);
  try {
    await body();
  } finally {
    stop.abort();
    await run;
  }
}

/**
 * A RestClient stand-in that serves discovery, lists and watches from memory, by resource plural:
 * send() hands an event to the open watches of a resource.
 */
class MemoryApi {
  /** The paths of the requests other than lists and watches. */
  readonly asked: string[] = [];
  private readonly watches = new Map<string, ((line: string) => void)[]>();
  readonly rest: RestClient;

  constructor(private readonly objects: Record<string, KubeObject[]>) {
    const resourceOf = (path: string): string => path.split('/').at(-1)!;
    this.rest = {
      server: 'https://api.example.test',
      request: (_method: string, path: string) => {
        this.asked.push(path);
        return Promise.resolve({ resources: Object.keys(this.objects).map((name) => ({ name })) });
      },
      list: (path: string, _opts: unknown, onItem: (item: unknown) => void) => {
        for (const item of this.objects[resourceOf(path)] ?? []) onItem(item);
        return Promise.resolve({ metadata: { resourceVersion: '1' }, items: [] });
      },
      stream: (path: string, _query: unknown, signal: AbortSignal, onLine: (line: string) => void) => {
        const resource = resourceOf(path);
        this.watches.set(resource, [...(this.watches.get(resource) ?? []), onLine]);
        return new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
      },
    } as unknown as RestClient;
  }

  /** Delivers a watch event of `resource` once its watch is open. */
  async send(resource: string, type: 'ADDED' | 'MODIFIED' | 'DELETED', object: KubeObject): Promise<void> {
    await until(() => (this.watches.get(resource)?.length ?? 0) > 0);
    for (const onLine of this.watches.get(resource)!) onLine(JSON.stringify({ type, object }));
  }
}
