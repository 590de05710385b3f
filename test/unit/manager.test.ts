/**
 * The controller builder and the manager's wiring of declarations: which caches a reconciler is
 * given, which are shared, what is refused at construction, and the RBAC rules derived from the
 * declarations. (Running controllers against a real API server is the e2e suites' part.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CONTROLLERS, runnableControllers } from '../../src/controllers/index.js';
import type { RestClient } from '../../src/kube/rest.js';
import { CRONJOBS, JOBS, type ResourceType } from '../../src/kube/resources.js';
import { Manager, type ManagerConfig } from '../../src/manager/manager.js';
import type { KubeObject, ObjectCache } from '../../src/runtime/cache/index.js';
import { controllerFor, type ControllerCaches } from '../../src/runtime/controller/index.js';
import { rulesFor } from '../../infra/rbac.js';

const WIDGETS: ResourceType = { group: 'example.test', version: 'v1', resource: 'widgets', kind: 'Widget', namespaced: true };
const GADGETS: ResourceType = { group: 'example.test', version: 'v1', resource: 'gadgets', kind: 'Gadget', namespaced: true };

const config: ManagerConfig = {
  namespace: 'ops',
  watchNamespaces: undefined,
  workers: 1,
  resyncPeriodMs: 0,
  shutdownTimeoutMs: 1000,
  leaderElection: undefined,
};
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
  it('names a controller after its primary kind unless named, and refuses owning a type twice', () => {
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
      /Job is owned twice/,
    );
  });

  it('derives RBAC: read the primary, patch its status, update its finalizers, read and write owned kinds as declared; same verbs share a rule', () => {
    const a = controllerFor(WIDGETS)
      .owns(JOBS, { writes: ['create', 'delete'] })
      .complete(() => ({ reconcile: () => Promise.resolve(undefined) }));
    const b = controllerFor(GADGETS)
      .owns(CRONJOBS, { writes: ['create', 'patch', 'delete'] })
      .complete(() => ({ reconcile: () => Promise.resolve(undefined) }));
    assert.deepEqual(rulesFor([a, b]), [
      { apiGroups: ['example.test'], resources: ['widgets', 'gadgets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['example.test'], resources: ['widgets/status', 'gadgets/status'], verbs: ['patch'] },
      { apiGroups: ['example.test'], resources: ['widgets/finalizers', 'gadgets/finalizers'], verbs: ['update'] },
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
      { apiGroups: ['batch'], resources: ['cronjobs'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
    ]);
  });
});

describe('manager wiring', () => {
  it('builds one controller per declaration, named as declared', () => {
    const manager = new Manager(config, { rest }, runnableControllers({ jobImage: 'busybox' }));
    assert.deepEqual(
      manager.controllers.map((c) => c.name),
      CONTROLLERS.map((d) => d.name),
    );
  });

  it('has queued work while any controller has a key waiting (what Events yield to)', () => {
    const manager = new Manager(config, { rest }, runnableControllers({ jobImage: 'busybox' }));
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
    const fake = {
      server: 'https://api.example.test',
      async request(_method: string, path: string) {
        assert.equal(path, '/apis/example.test/v1', 'only the preflight asks anything but lists and watches');
        return { resources: [{ name: 'widgets' }] };
      },
      async list(_path: string, _opts: unknown, onItem: (item: unknown) => void) {
        onItem(annotated('5'));
        return { metadata: { resourceVersion: '5' }, items: [] };
      },
      stream: (_path: string, _query: unknown, signal: AbortSignal) =>
        new Promise<void>((resolve) => signal.addEventListener('abort', () => resolve(), { once: true })),
    } as unknown as RestClient;
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
    const manager = new Manager(config, { rest: fake }, [declaration.withContext()]);
    const running = manager.run(served.signal);
    try {
      while (!manager.hasSynced()) await new Promise((r) => setTimeout(r, 5));
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

  it('the operator declares what its install grants', () => {
    const declared = CONTROLLERS.flatMap((d) => [d.primary.kind, ...d.owned.map((o) => o.type.kind)]);
    assert.deepEqual(declared, ['Echo', 'Job', 'ScheduledEcho', 'CronJob']);
  });
});
