/**
 * The manager runs declared controllers and owns their parts' lifetimes (controller-runtime's
 * manager):
 *
 *   always on, on every replica: one informer (and cache) per resource type the controllers
 *   declare, shared between them; probes; metrics; the Lease watch;
 *   leader only: the controllers' workers (all of them, or none).
 *
 * Guarantees: workers start only after every cache has synced, and the start (the API server
 * reachable, the CRDs served, every cache synced) either finishes within cacheSyncTimeoutMs or
 * run() rejects with a StartupTimeoutError naming the last problem. Two signals stop the workers
 * (see runtime/controller's RunSignals): on a graceful stop no new work is taken and in-flight
 * reconciles get a bounded time to finish, and only then is the Lease released (so the next leader
 * never overlaps with us); when leadership is lost, in-flight reconciles are aborted at once and
 * run() rejects with LeadershipLostError so the process exits non-zero.
 */
import { restLeaseApi } from '../kube/coordination.js';
import type { RestClient } from '../kube/rest.js';
import { LEASES, resourcePath, type ResourceType } from '../kube/resources.js';
import { KubeClient } from '../runtime/client/index.js';
import { ReadYourWrites, type KubeObject, type ObjectCache } from '../runtime/cache/index.js';
import { realClock, type Clock } from '../runtime/clock.js';
import {
  Controller,
  declaredCaches,
  nopControllerMetrics,
  ownerOf,
  type RunnableController,
  type ControllerMetrics,
  type OwnedType,
} from '../runtime/controller/index.js';
import { nopEventRecorder, type EventRecorder } from '../runtime/events.js';
import { InformerSet, informerLiveness, stripForCache, type InformerMetrics } from '../runtime/informer/index.js';
import { KubeLeaseLock, LeaderElector, type LeaderElectionMetrics } from '../runtime/leaderelection/index.js';
import { nopLogger, type Logger } from '../runtime/log.js';
import { noopWorkQueueMetrics, type WorkQueueMetricsProvider } from '../runtime/workqueue/index.js';
import { apiServerLiveness } from './liveness.js';
import { waitForApi } from './preflight.js';
import { StartupDeadline } from './startup.js';

export interface LeaderElectionSettings {
  leaseName: string;
  identity: string;
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

export interface ManagerConfig {
  /** The operator's own namespace: the Lease lives here. */
  namespace: string;
  /** The oldest Kubernetes minor ("1.31") the application supports: an older server ends the start; undefined: any. */
  minimumKubernetes?: string;
  /** undefined = all namespaces. */
  watchNamespaces: string[] | undefined;
  workers: number;
  /** 0 = no periodic resync. */
  resyncPeriodMs: number;
  /** The work queues' hand-out order (runtime/workqueue/fair.ts); default fair. */
  queueOrder?: 'fair' | 'fifo';
  /** Bound on finishing in-flight reconciles at shutdown. */
  shutdownTimeoutMs: number;
  /** undefined = no leader election (one replica). */
  leaderElection: LeaderElectionSettings | undefined;
  /** Bound on the start: preflight and the caches' first sync (controller-runtime's CacheSyncTimeout); default 2 min. */
  cacheSyncTimeoutMs?: number;
  /**
   * The "apiserver" liveness check fails once the API server has given no answer at all for this
   * long while requests were made (see kube/reachability.ts); 0 = no such check. Default 2 min.
   */
  apiUnreachableTimeoutMs?: number;
}

/** controller-runtime's default CacheSyncTimeout. */
export const DEFAULT_CACHE_SYNC_TIMEOUT_MS = 120_000;
/**
 * Long enough that a restart of kube-apiserver (typically well under a minute until it serves
 * again) or a control-plane upgrade does not get every operator pod restarted; short enough that
 * a proxy or tunnel gone silent for good is cleared by a restart within a few minutes (plus the
 * liveness probe's own period x failureThreshold).
 */
export const DEFAULT_API_UNREACHABLE_TIMEOUT_MS = 120_000;

export interface HealthRegistry {
  addReadinessCheck(name: string, check: () => boolean | string): void;
  addLivenessCheck(name: string, check: () => boolean | string): void;
}

export interface ManagerDeps {
  rest: RestClient;
  logger?: Logger;
  clock?: Clock;
  /** Where reconcilers record Events; default nowhere. */
  events?: EventRecorder;
  health?: HealthRegistry;
  controllerMetrics?: ControllerMetrics;
  queueMetrics?: WorkQueueMetricsProvider;
  leaderMetrics?: LeaderElectionMetrics;
  /** Per informer, by name (e.g. "widgets/default"). */
  informerMetrics?: (informerName: string) => InformerMetrics;
}

export class Manager {
  private readonly log: Logger;
  private readonly clock: Clock;
  /** @internal The controllers it runs, one per declaration: for the runtime's own tests. */
  readonly controllers: Controller[] = [];
  /** One per resource type (and label selector), shared by every controller that declares it. */
  private readonly caches = new Map<string, InformerSet<KubeObject>>();
  private readonly leases: InformerSet<KubeObject> | undefined;
  private readonly elector: LeaderElector | undefined;

  constructor(
    private readonly config: ManagerConfig,
    private readonly deps: ManagerDeps,
    private readonly declarations: readonly RunnableController[],
  ) {
    this.log = deps.logger ?? nopLogger;
    this.clock = deps.clock ?? realClock;
    const client = new KubeClient(deps.rest);
    const events = deps.events ?? nopEventRecorder;
    const common = {
      workers: config.workers,
      clock: this.clock,
      logger: this.log,
      metrics: deps.controllerMetrics ?? nopControllerMetrics,
      queueMetrics: deps.queueMetrics ?? noopWorkQueueMetrics,
      order: { fifo: config.queueOrder === 'fifo' },
    };
    for (const declaration of declarations) {
      const primary = this.cacheFor(declaration.primary, { transform: declaration.primaryTransform });
      const owned = declaration.owned.map((o) => ({ ...o, cache: this.cacheFor(o.type, o, true) }));
      const watched = declaration.watched.map((w) => ({ ...w, cache: this.cacheFor(w.type, w, true) }));
      const caches = declaredCaches(declaration.name, {
        primary: { type: declaration.primary, cache: readYourWrites(primary) },
        owned,
        watched,
      });
      const reconciler = declaration.reconciler({ caches, client, events });
      const controller = new Controller({ ...common, name: declaration.name }, reconciler);
      controller.watchPrimary(primary, declaration.primaryPredicate);
      for (const o of owned) controller.watchOwned(o.cache, ownerOf(declaration), o.predicate);
      for (const w of watched) controller.watchMapped(w.cache, w.toKeys, w.predicate);
      this.controllers.push(controller);
    }

    const le = config.leaderElection;
    if (le) {
      const lock = new KubeLeaseLock(restLeaseApi(deps.rest), config.namespace, le.leaseName);
      this.elector = new LeaderElector(
        {
          leaseName: le.leaseName,
          namespace: config.namespace,
          identity: le.identity,
          leaseDurationMs: le.leaseDurationMs,
          renewDeadlineMs: le.renewDeadlineMs,
          retryPeriodMs: le.retryPeriodMs,
          releaseOnCancel: true,
        },
        lock,
        { clock: this.clock, logger: this.log, metrics: deps.leaderMetrics },
      );
      // Standbys watch the Lease, so a release is noticed at once rather than at the next poll.
      this.leases = new InformerSet<KubeObject>({
        rest: deps.rest,
        type: LEASES,
        namespaces: [config.namespace],
        fieldSelector: `metadata.name=${le.leaseName}`,
        informer: { logger: this.log, clock: this.clock },
        metrics: deps.informerMetrics,
      });
      const wake = (): void => this.elector!.wake();
      this.leases.addEventHandler({ onAdd: wake, onUpdate: wake, onDelete: wake });
    }
  }

  /**
   * True while any controller has keys queued and not yet handed to a worker: the event recorder
   * holds Events back meanwhile (see KubeEventRecorder's busy option).
   */
  hasQueuedWork(): boolean {
    return this.controllers.some((c) => c.queue.len() > 0);
  }

  /**
   * The shared cache of `type`: primary kinds with resync, owned and watched kinds narrowed by
   * their declared selector; each through its declared transform. Two controllers that declare the same type
   * must declare it alike, or they would each need a different cache of it.
   */
  private cacheFor(
    type: ResourceType,
    declared: Pick<OwnedType, 'labelSelector' | 'transform'>,
    secondary = false,
  ): InformerSet<KubeObject> {
    const key = `${resourcePath(type)}?${declared.labelSelector ?? ''}`;
    const existing = this.caches.get(key);
    if (existing) {
      if (existing.transform !== declared.transform) throw new Error(`${type.kind} is declared with two different cache transforms`);
      return existing;
    }
    const set = new InformerSet<KubeObject>({
      rest: this.deps.rest,
      type,
      namespaces: this.config.watchNamespaces,
      labelSelector: declared.labelSelector,
      informer: {
        logger: this.log,
        clock: this.clock,
        // Owned and watched objects wake their primaries; a resync of the primaries is enough.
        resyncPeriodMs: secondary ? undefined : this.config.resyncPeriodMs || undefined,
        transform: declared.transform,
      },
      metrics: this.deps.informerMetrics,
    });
    this.caches.set(key, set);
    return set;
  }

  private get informerSets(): InformerSet<KubeObject>[] {
    return [...this.caches.values(), ...(this.leases ? [this.leases] : [])];
  }

  /** Every cache has synced: readiness (also on a standby, so rolling updates proceed). */
  hasSynced(): boolean {
    return this.informerSets.every((s) => s.hasSynced());
  }

  /**
   * Runs until `signal` aborts (resolves), leadership is lost (rejects with LeadershipLostError)
   * or the start does not finish in time (rejects with StartupTimeoutError). Everything it
   * started is stopped when it settles.
   */
  async run(signal: AbortSignal): Promise<void> {
    const health = this.deps.health;
    health?.addReadinessCheck('informers-synced', () => this.hasSynced() || 'caches not synced yet');
    const informers = this.informerSets.flatMap((s) => s.informers);
    health?.addLivenessCheck('informers', () => informerLiveness(informers, signal));
    const unreachableMs = this.config.apiUnreachableTimeoutMs ?? DEFAULT_API_UNREACHABLE_TIMEOUT_MS;
    if (unreachableMs > 0) health?.addLivenessCheck('apiserver', () => apiServerLiveness(this.deps.rest, unreachableMs, signal));

    const startup = new StartupDeadline(this.clock, this.config.cacheSyncTimeoutMs ?? DEFAULT_CACHE_SYNC_TIMEOUT_MS);
    try {
      await this.startThenRun(startup, signal);
    } finally {
      startup.done();
    }
  }

  /** The start (preflight, informers, sync) and then the run, the start bounded by `startup`. */
  private async startThenRun(startup: StartupDeadline, signal: AbortSignal): Promise<void> {
    try {
      await waitForApi(
        this.deps.rest,
        this.declarations.map((d) => d.primary),
        this.log,
        this.clock,
        startup.bound(signal),
        { minimumKubernetes: this.config.minimumKubernetes, onProblem: (problem) => startup.problem(problem) },
      );
    } catch (err) {
      throw startup.explain(err);
    }
    const informersStop = new AbortController();
    // An informer's run() rejects only on a bug (its own errors are retried forever): stop
    // everything in order, with the lease released, rather than die of an unhandled rejection.
    const failed = new AbortController();
    const informerRuns = this.informerSets
      .flatMap((s) => s.run(informersStop.signal))
      .map((run) =>
        run.catch((err: unknown) => {
          this.log.error('an informer failed; stopping', { error: err instanceof Error ? err.message : String(err) });
          failed.abort(err);
        }),
      );
    const stop = AbortSignal.any([signal, failed.signal]);
    try {
      await this.runUntil(stop, startup);
      if (failed.signal.aborted) throw failed.signal.reason;
    } finally {
      informersStop.abort();
      await Promise.allSettled(informerRuns);
    }
  }

  private async runUntil(signal: AbortSignal, startup: StartupDeadline): Promise<void> {
    try {
      await this.waitForSync(startup.bound(signal));
    } catch (err) {
      startup.problem(this.unsynced());
      throw startup.explain(err);
    }
    startup.done();
    this.log.info('caches synced', Object.fromEntries([...this.caches.values()].map((s) => [s.name, s.size])));
    if (!this.elector) {
      await this.runControllers({ stop: signal, drainTimeoutMs: this.config.shutdownTimeoutMs });
      return;
    }
    // The elector gives leading work until the renew deadline to wind down before it releases.
    const drainMs = Math.min(this.config.shutdownTimeoutMs, Math.max(0, this.config.leaderElection!.renewDeadlineMs - 1000));
    let working: Promise<void> | undefined;
    const electionEnded = new AbortController();
    try {
      await this.elector.run(
        {
          onStartedLeading: (leading) => {
            this.log.info('started leading; starting workers');
            // Leading ends gracefully (we stop and release) or not (the lease is lost): only the
            // latter aborts in-flight reconciles at once, and so does the end of the election.
            const lost = new AbortController();
            const onLeadingEnd = (): void => {
              if (!signal.aborted)
                lost.abort(new Error(`leadership lost: ${String((leading.reason as Error)?.message ?? leading.reason)}`));
            };
            if (leading.aborted) onLeadingEnd();
            else leading.addEventListener('abort', onLeadingEnd, { once: true });
            working = this.runControllers({
              stop: leading,
              abort: AbortSignal.any([lost.signal, electionEnded.signal]),
              drainTimeoutMs: drainMs,
            });
            return working;
          },
          onStoppedLeading: () => this.log.info('stopped leading'),
          onNewLeader: (identity) => this.log.info('leader observed', { leader: identity }),
        },
        signal,
      );
    } finally {
      // However the election ended (the lease released, lost or given up), no work outlives it.
      electionEnded.abort(new Error('leader election ended'));
      await working;
    }
  }

  /** Which caches have not synced, and each one's last error. */
  private unsynced(): string {
    const waiting = this.informerSets
      .flatMap((s) => s.informers)
      .filter((i) => !i.hasSynced())
      .map((i) => `${i.name}${i.status.lastError ? ` (${i.status.lastError})` : ''}`);
    return `caches not synced: ${waiting.join(', ')}`;
  }

  private async waitForSync(signal: AbortSignal): Promise<void> {
    while (!this.hasSynced()) {
      if (signal.aborted) throw signal.reason;
      await this.clock.sleep(20, signal).catch(() => undefined);
    }
  }

  private async runControllers(signals: { stop: AbortSignal; abort?: AbortSignal; drainTimeoutMs: number }): Promise<void> {
    await Promise.all(this.controllers.map((c) => c.run(signals)));
  }
}

/**
 * A reconciler's view of a primary resource's cache: reads never older than our own writes. A
 * written object is remembered as the cache would hold it (the cache's transform applied to a
 * shallow copy: the writer keeps its object whole), so what a write returned (all of an
 * object's annotations) is not kept until the watch catches up.
 */
function readYourWrites<T extends KubeObject>(set: InformerSet<T>): ObjectCache<T> {
  const reads = new ReadYourWrites<T>(set, set);
  const transform = set.transform ?? stripForCache;
  return {
    get: (key) => reads.get(key),
    byIndex: (index, value) => set.byIndex(index, value),
    wrote: (obj) => reads.wrote(transform({ ...obj })),
  };
}
