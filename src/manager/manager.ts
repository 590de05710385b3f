/**
 * The manager wires the parts and owns their lifetimes (controller-runtime's manager):
 *
 *   always on, on every replica: informers + caches, probes, metrics, the Lease watch;
 *   leader only: the controllers' workers (all of them, or none).
 *
 * Guarantees: workers start only after every cache has synced; on graceful stop no new work is
 * taken, in-flight reconciles get a bounded time to finish, and only then is the Lease released
 * (so the next leader never overlaps with us); when leadership is lost, in-flight reconciles are
 * aborted at once and run() rejects with LeadershipLostError so the process exits non-zero.
 */
import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import { restLeaseApi } from '../kube/coordination.js';
import type { Echo } from '../api/echo.js';
import type { ScheduledEcho } from '../api/scheduledecho.js';
import { MANAGED_SELECTOR } from '../controllers/common/labels.js';
import type { ObjectCache } from '../controllers/common/ports.js';
import { nopEventRecorder, type EventRecorder } from '../runtime/events.js';
import { jobForCache } from '../controllers/echo/cache.js';
import { EchoReconciler } from '../controllers/echo/reconciler.js';
import { ScheduledEchoReconciler } from '../controllers/scheduledecho/reconciler.js';
import type { RestClient } from '../kube/rest.js';
import { CRONJOBS, ECHOS, JOBS, LEASES, SCHEDULED_ECHOS } from '../kube/resources.js';
import { nopLogger, type Logger } from '../runtime/log.js';
import { realClock, type Clock } from '../runtime/clock.js';
import { Controller, ImmediateStop, nopControllerMetrics, type ControllerMetrics } from '../runtime/controller/index.js';
import { ReadYourWrites, type KubeObject } from '../runtime/cache/index.js';
import type { InformerMetrics } from '../runtime/informer/index.js';
import { KubeLeaseLock, LeaderElector, type LeaderElectionMetrics } from '../runtime/leaderelection/index.js';
import { noopWorkQueueMetrics, type WorkQueueMetricsProvider } from '../runtime/workqueue/index.js';
import { InformerSet, informerLiveness } from './informers.js';
import { waitForApi } from './preflight.js';

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
  /** undefined = all namespaces. */
  watchNamespaces: string[] | undefined;
  workers: number;
  jobImage: string;
  /** 0 = no periodic resync. */
  resyncPeriodMs: number;
  /** Bound on finishing in-flight reconciles at shutdown. */
  shutdownTimeoutMs: number;
  /** undefined = no leader election (one replica). */
  leaderElection: LeaderElectionSettings | undefined;
}

export interface HealthRegistry {
  addReadinessCheck(name: string, check: () => boolean | string): void;
  addLivenessCheck(name: string, check: () => boolean | string): void;
}

export interface ManagerDeps {
  rest: RestClient;
  logger?: Logger;
  clock?: Clock;
  events?: EventRecorder;
  health?: HealthRegistry;
  controllerMetrics?: ControllerMetrics;
  queueMetrics?: WorkQueueMetricsProvider;
  leaderMetrics?: LeaderElectionMetrics;
  /** Per informer, by name (e.g. "echos/default"). */
  informerMetrics?: (informerName: string) => InformerMetrics;
}

export class Manager {
  private readonly log: Logger;
  private readonly clock: Clock;
  readonly echos: InformerSet<Echo & KubeObject>;
  readonly scheduledEchos: InformerSet<ScheduledEcho & KubeObject>;
  readonly jobs: InformerSet<V1Job & KubeObject>;
  readonly cronJobs: InformerSet<V1CronJob & KubeObject>;
  readonly controllers: Controller[];
  private readonly leases: InformerSet<KubeObject> | undefined;
  private readonly elector: LeaderElector | undefined;

  constructor(
    private readonly config: ManagerConfig,
    private readonly deps: ManagerDeps,
  ) {
    this.log = deps.logger ?? nopLogger;
    this.clock = deps.clock ?? realClock;
    const informer = { logger: this.log, clock: this.clock, resyncPeriodMs: config.resyncPeriodMs || undefined };
    const namespaces = config.watchNamespaces;
    const metrics = deps.informerMetrics;
    this.echos = new InformerSet({ rest: deps.rest, type: ECHOS, namespaces, informer, metrics });
    this.scheduledEchos = new InformerSet({ rest: deps.rest, type: SCHEDULED_ECHOS, namespaces, informer, metrics });
    // Only what we made: a cluster's other Jobs are none of our business and would cost memory.
    // And of those, no pod template: the Echo reconciler never reads it (see jobForCache).
    this.jobs = new InformerSet({
      rest: deps.rest,
      type: JOBS,
      namespaces,
      labelSelector: MANAGED_SELECTOR,
      informer: { ...informer, resyncPeriodMs: undefined, transform: jobForCache },
      metrics,
    });
    this.cronJobs = new InformerSet({
      rest: deps.rest,
      type: CRONJOBS,
      namespaces,
      labelSelector: MANAGED_SELECTOR,
      informer: { ...informer, resyncPeriodMs: undefined },
      metrics,
    });

    const common = {
      workers: config.workers,
      clock: this.clock,
      logger: this.log,
      metrics: deps.controllerMetrics ?? nopControllerMetrics,
      queueMetrics: deps.queueMetrics ?? noopWorkQueueMetrics,
    };
    const events = deps.events ?? nopEventRecorder;
    const echo = new Controller(
      { ...common, name: 'echo' },
      new EchoReconciler({ echos: readYourWrites(this.echos), jobs: this.jobs, api: deps.rest, events, jobImage: config.jobImage }),
    )
      .watchPrimary(this.echos)
      .watchOwned(this.jobs, { group: 'mmontes.io', kind: 'Echo' });
    const scheduledEcho = new Controller(
      { ...common, name: 'scheduledecho' },
      new ScheduledEchoReconciler({
        scheduledEchos: readYourWrites(this.scheduledEchos),
        cronJobs: this.cronJobs,
        api: deps.rest,
        events,
        jobImage: config.jobImage,
      }),
    )
      .watchPrimary(this.scheduledEchos)
      .watchOwned(this.cronJobs, { group: 'mmontes.io', kind: 'ScheduledEcho' });
    this.controllers = [echo, scheduledEcho];

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
        metrics,
      });
      const wake = (): void => this.elector!.wake();
      this.leases.addEventHandler({ onAdd: wake, onUpdate: wake, onDelete: wake });
    }
  }

  private get informerSets(): InformerSet<KubeObject>[] {
    return [this.echos, this.scheduledEchos, this.jobs, this.cronJobs, ...(this.leases ? [this.leases] : [])] as InformerSet<KubeObject>[];
  }

  /** Every cache has synced: readiness (also on a standby, so rolling updates proceed). */
  hasSynced(): boolean {
    return this.informerSets.every((s) => s.hasSynced());
  }

  /**
   * Runs until `signal` aborts (resolves) or leadership is lost (rejects with
   * LeadershipLostError). Everything it started is stopped when it settles.
   */
  async run(signal: AbortSignal): Promise<void> {
    const health = this.deps.health;
    health?.addReadinessCheck('informers-synced', () => this.hasSynced() || 'caches not synced yet');
    const informers = this.informerSets.flatMap((s) => s.informers);
    health?.addLivenessCheck('informers', () => informerLiveness(informers, signal));

    await waitForApi(this.deps.rest, this.log, this.clock, signal);
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
      await this.runUntil(stop);
      if (failed.signal.aborted) throw failed.signal.reason;
    } finally {
      informersStop.abort();
      await Promise.allSettled(informerRuns);
    }
  }

  private async runUntil(signal: AbortSignal): Promise<void> {
    await this.waitForSync(signal);
    this.log.info('caches synced', {
      echos: this.echos.size,
      scheduledEchos: this.scheduledEchos.size,
      jobs: this.jobs.size,
      cronJobs: this.cronJobs.size,
    });
    if (!this.elector) {
      await this.runControllers(signal, signal, this.config.shutdownTimeoutMs);
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
            working = this.runControllers(leading, signal, drainMs, electionEnded.signal);
            return working;
          },
          onStoppedLeading: () => this.log.info('stopped leading'),
          onNewLeader: (identity) => this.log.info('leader observed', { leader: identity }),
        },
        signal,
      );
    } finally {
      // However the election ended (the lease released, lost or given up), no work outlives it.
      electionEnded.abort(new ImmediateStop('leader election ended'));
      await working;
    }
  }

  private async waitForSync(signal: AbortSignal): Promise<void> {
    while (!this.hasSynced()) {
      if (signal.aborted) throw signal.reason;
      await this.clock.sleep(20, signal).catch(() => undefined);
    }
  }

  /**
   * Runs every controller until `leading` aborts. If it aborts while `stop` has not (leadership
   * lost, not a graceful stop), in-flight reconciles are aborted at once.
   */
  private async runControllers(leading: AbortSignal, stop: AbortSignal, drainMs: number, abort?: AbortSignal): Promise<void> {
    const workers = new AbortController();
    const onLeadingEnd = (): void => {
      workers.abort(
        stop.aborted
          ? leading.reason
          : new ImmediateStop(`leadership ended: ${String((leading.reason as Error)?.message ?? leading.reason)}`),
      );
    };
    if (leading.aborted) onLeadingEnd();
    else leading.addEventListener('abort', onLeadingEnd, { once: true });
    await Promise.all(this.controllers.map((c) => c.run(workers.signal, { drainTimeoutMs: drainMs, abort })));
  }
}

/** A reconciler's view of a primary resource's cache: reads never older than our own writes. */
function readYourWrites<T extends KubeObject>(set: InformerSet<T>): ObjectCache<T> {
  const reads = new ReadYourWrites<T>(set, set);
  return { get: (key) => reads.get(key), byIndex: (index, value) => set.byIndex(index, value), wrote: (obj) => reads.wrote(obj) };
}
