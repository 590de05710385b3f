/**
 * Echo -> one Job in the Echo's namespace, and the Job's progress -> the Echo's status.
 *
 * Guarantees: at most one Job per (Echo, message): the Job's name is derived from both, so a
 * repeated or concurrent create gets AlreadyExists instead of a duplicate. A finished run is not
 * run again; a new message starts one new run and deletes the previous run's Job. A run starts,
 * and a previous run's Job is deleted, only once the server confirms what the cached Echo says
 * (caches lag; see claimRun and checkLive). A run whose Job is removed (by hand, or a TTL) before
 * its outcome was recorded is not repeated either, once it is known to have started: status says
 * Failed, JobRemoved (see started).
 * Nothing is written when the cluster already matches (a restart writes nothing).
 */
import type { V1Job } from '@kubernetes/client-node';
import { ECHOS, type Echo } from '../../api/echo.js';
import {
  type Client,
  type EventRecorder,
  findCondition,
  isAlreadyExists,
  isNotFound,
  JOBS,
  keyOf,
  type Latest,
  NameTakenError,
  type ObjectCache,
  PrimaryReconciler,
  type ReconcileContext,
  stallAt,
  withTypeMeta,
  writeStatus,
} from '../../runtime/index.js';
import { controlledBy, isControlledBy } from '../common/owner.js';
import { desiredJob, jobNameFor } from './desired.js';
import { echoStatus, isFinished, jobRemovedRun, RECONCILED_CONDITION, reconciledOk, type RunState } from './status.js';

/** How many started runs a reconciler remembers (see EchoReconciler.started). */
const STARTED_RUNS_KEPT = 10_000;

const startedKey = (echo: Echo, jobName: string): string => `${echo.metadata.uid}/${echo.metadata.generation}/${jobName}`;

export interface EchoReconcilerDeps {
  echos: ObjectCache<Echo>;
  jobs: ObjectCache<V1Job>;
  client: Client;
  events: EventRecorder;
  jobImage: string;
  now?: () => Date;
  /** See PrimaryFrame. */
  stalledRecheckMs?: number;
}

export class EchoReconciler extends PrimaryReconciler<Echo> {
  /**
   * Runs this process created a Job for (`uid/generation/jobName`), oldest first, at most STARTED_RUNS_KEPT:
   * the status a run starts with reads the same before its Job is created and after (runState),
   * so a Job gone from the cache with that status could be one never created (re-create it) or
   * one removed before its outcome was seen (never repeat it). This remembers which; after a
   * restart only a status that saw the run started (Running) tells.
   */
  private readonly started = new Set<string>();

  constructor(private readonly deps: EchoReconcilerDeps) {
    super({
      type: ECHOS,
      cache: deps.echos,
      client: deps.client,
      events: deps.events,
      failureCondition: RECONCILED_CONDITION,
      now: deps.now,
      stalledRecheckMs: deps.stalledRecheckMs,
    });
  }

  protected async pass(latest: Latest<Echo>, ctx: ReconcileContext): Promise<void> {
    const { client, events } = this.deps;
    const echo = latest.object;
    const jobName = jobNameFor(echo);
    const owned = controlledBy(this.deps.jobs, echo, ECHOS);

    const previous = owned.filter((j) => j.metadata?.name !== jobName);
    if (previous.length > 0) {
      // As irreversible as starting a run: a lagging Echos cache (a new leader whose watch
      // stalled) would take the CURRENT message's Job for a previous one. Confirm first.
      const { why } = await this.checkLive(echo, ctx);
      if (why) {
        ctx.log.info(`not deleting the previous run's Job: ${why} (the cache is behind)`, {
          jobs: previous.map((j) => j.metadata?.name).join(','),
        });
        return;
      }
    }
    for (const stale of previous) {
      if (await this.deleteJob(stale, ctx)) {
        events.recordEvent(echo, 'Normal', 'PreviousRunDeleted', `Deleted Job ${stale.metadata?.name} of the previous message`);
      }
    }

    let job = owned.find((j) => j.metadata?.name === jobName);
    const finished = echo.status?.jobName === jobName && isFinished(echo.status?.phase);
    if (!job && finished) {
      // Its Job was removed after the run (by hand or a TTL): the run happened; do not repeat it.
      return;
    }
    // The run's state when its Job was removed before its outcome was seen (else read from the Job).
    let removedRun: RunState | undefined;
    if (!job && this.runStarted(echo, jobName)) {
      // Not cached yet, or removed: the server says which.
      job = await this.liveJob(echo, jobName, ctx);
      if (!job) removedRun = jobRemovedRun(jobName);
    }
    if (!job && !removedRun) {
      const claimed = await this.claimRun(echo, jobName, ctx);
      if (!claimed) return;
      if (claimed !== true) latest.object = withTypeMeta(ECHOS, claimed);
      job = await this.createJob(echo, ctx);
      this.remember(echo, jobName);
    }
    const current = latest.object;
    const desired = echoStatus(current, jobName, job, reconciledOk, this.now, undefined, removedRun);
    const written = await writeStatus({
      client,
      type: ECHOS,
      object: current,
      current: current.status,
      desired,
      signal: ctx.signal,
      wrote: this.wrote,
    });
    if (written) latest.object = withTypeMeta(ECHOS, written);
    // Either write (the claim or this one) replaced the cached Echo in `latest`.
    if (latest.object !== echo) {
      ctx.log.debug('status written', { phase: desired.phase });
      if (desired.phase !== echo.status?.phase) this.announce(echo, desired.phase, jobName, job, removedRun);
    }
  }

  /**
   * A run cannot be undone (its pod may print before anyone could delete it), so before starting
   * one, confirm with the server what the caches say. They are fed by separate watches that can be
   * out of step: after a re-list (410) the Jobs cache may learn that the garbage collector removed
   * a Job before the Echos cache learns that its Echo was deleted, and our own status write may
   * not be cached yet when a finished run's Job disappears; trusting the caches then would make a
   * deleted Echo's Job once more.
   *
   * The confirmation is the status the run starts with (phase Pending, this jobName), written
   * conditional on the cached resourceVersion: if it lands, the cached Echo was the server's
   * Echo, so what the cache said holds, and the write the run needs anyway doubled as the check
   * (one request per run rather than a GET and a PATCH). A 409 or 404 means the cache is behind:
   * no run; the watch event that brings it up to date enqueues the key again. When that status
   * is already in place there is nothing to write, and a GET confirms instead (runStillWanted).
   *
   * Resolves with the Echo as written, true when confirmed without a write, or false for no run.
   */
  private async claimRun(echo: Echo, jobName: string, ctx: ReconcileContext): Promise<Echo | boolean> {
    // The Reconciled condition stays as it is until the Job exists: a pass whose create keeps
    // being refused (a quota) would otherwise flip it True here and False after the refusal. So
    // does a stall of this generation (its create refused for good, or the Job's name taken): a
    // recheck that meets it again then writes nothing.
    const reconciled = findCondition(echo.status?.conditions, RECONCILED_CONDITION) ?? reconciledOk;
    const stall = stallAt(echo.status?.conditions, echo.metadata.generation);
    const starting = echoStatus(echo, jobName, undefined, reconciled, this.now, stall);
    try {
      const written = await writeStatus({
        client: this.deps.client,
        type: ECHOS,
        object: echo,
        current: echo.status,
        desired: starting,
        signal: ctx.signal,
        wrote: this.wrote,
      });
      return written ?? (await this.runStillWanted(echo, jobName, ctx));
    } catch (err) {
      if (!isNotFound(err)) throw err; // a 409 goes back to the queue, with backoff
      ctx.log.info('not starting a run: the Echo is gone (the cache is behind)', { job: jobName });
      return false;
    }
  }

  /** claimRun's check by GET: the live Echo still wants this run. */
  private async runStillWanted(echo: Echo, jobName: string, ctx: ReconcileContext): Promise<boolean> {
    const { live, why: stale } = await this.checkLive(echo, ctx);
    const why = stale ?? (live?.status?.jobName === jobName && isFinished(live.status.phase) ? 'this run already finished' : undefined);
    if (why) ctx.log.info(`not starting a run: ${why} (the cache is behind)`, { job: jobName });
    return why === undefined;
  }

  /**
   * The server's Echo against the cached one: `why` says how the cache is behind (gone,
   * re-created, being deleted, a newer spec), undefined when it is in step.
   */
  private async checkLive(echo: Echo, ctx: ReconcileContext): Promise<{ live?: Echo; why?: string }> {
    let live: Echo;
    try {
      live = await this.deps.client.get(ECHOS, keyOf(echo), { signal: ctx.signal });
    } catch (err) {
      if (isNotFound(err)) return { why: 'the Echo is gone' };
      throw err;
    }
    const meta = live.metadata;
    const why =
      meta.uid !== echo.metadata.uid
        ? 'the Echo was re-created'
        : meta.deletionTimestamp
          ? 'the Echo is being deleted'
          : meta.generation !== echo.metadata.generation
            ? 'the Echo has a newer spec'
            : undefined;
    return { live, why };
  }

  private async createJob(echo: Echo, ctx: ReconcileContext): Promise<V1Job> {
    const body = desiredJob(echo, this.deps.jobImage);
    try {
      const created = await this.deps.client.create(JOBS, body, { signal: ctx.signal });
      ctx.log.info('job created', { job: body.metadata!.name });
      this.deps.events.recordEvent(echo, 'Normal', 'JobCreated', `Created Job ${body.metadata!.name} to print the message`);
      return created;
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      // Made by an earlier pass whose watch event has not reached the cache yet: use it.
      const existing = await this.liveJob(echo, body.metadata!.name!, ctx);
      if (!existing) throw err; // gone again since: back to the queue
      return existing;
    }
  }

  /**
   * Whether this generation's run of `jobName` is known to have started: this process created its
   * Job, or the status saw it run. Per generation: a message edited back to an earlier one names
   * the earlier run's Job again, and that generation's run is a new one.
   */
  private runStarted(echo: Echo, jobName: string): boolean {
    if (this.started.has(startedKey(echo, jobName))) return true;
    const status = echo.status;
    return status?.jobName === jobName && status.phase === 'Running' && status.observedGeneration === echo.metadata.generation;
  }

  private remember(echo: Echo, jobName: string): void {
    const key = startedKey(echo, jobName);
    this.started.delete(key);
    this.started.add(key);
    if (this.started.size > STARTED_RUNS_KEPT) this.started.delete(this.started.values().next().value!);
  }

  /** The server's Job of this run, undefined when it is gone; one another owner controls is NameTaken. */
  private async liveJob(echo: Echo, jobName: string, ctx: ReconcileContext): Promise<V1Job | undefined> {
    let live: V1Job;
    try {
      live = await this.deps.client.get(JOBS, { namespace: echo.metadata.namespace, name: jobName }, { signal: ctx.signal });
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
    if (!isControlledBy(live, echo, ECHOS)) {
      throw new NameTakenError(
        `Job ${echo.metadata.namespace}/${jobName} already exists and is not controlled by this Echo; delete or rename it`,
      );
    }
    return live;
  }

  /** True when this call deleted the Job (false: it was already gone). */
  private async deleteJob(job: V1Job, ctx: ReconcileContext): Promise<boolean> {
    const { name, uid } = job.metadata ?? {};
    try {
      // Background: the pods go too; the uid precondition never deletes a same-named newcomer.
      await this.deps.client.delete(JOBS, keyOf(job), { propagationPolicy: 'Background', preconditions: { uid }, signal: ctx.signal });
      ctx.log.info('previous run deleted', { job: name });
      return true;
    } catch (err) {
      if (!isNotFound(err)) throw err;
      return false;
    }
  }

  private announce(echo: Echo, phase: string | undefined, jobName: string, job: V1Job | undefined, removedRun?: RunState): void {
    if (phase === 'Succeeded') this.deps.events.recordEvent(echo, 'Normal', 'RunSucceeded', `Job ${jobName} printed the message`);
    if (removedRun) {
      // The Event says what the status says.
      this.deps.events.recordEvent(echo, 'Warning', removedRun.succeeded.reason, removedRun.succeeded.message);
    } else if (phase === 'Failed') {
      const why = job?.status?.conditions?.find((c) => c.type === 'Failed')?.message ?? 'the Job failed';
      this.deps.events.recordEvent(echo, 'Warning', 'RunFailed', `Job ${jobName} failed: ${why}`);
    }
  }
}
