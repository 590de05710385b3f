/**
 * LeaderElector: at most one candidate leads at a time, coordinated through a Lease, with the
 * semantics of client-go's leaderelection package.
 *
 * Hand-written because @kubernetes/client-node has no leader election and no maintained npm
 * package offers a Lease elector with these guarantees. Written from the semantics, not ported.
 *
 * Guarantees, given validateLeaderElectionConfig's ordering and clocks that tick at roughly the
 * same rate (their readings may disagree by any amount):
 * - A standby takes over a held lease only after it has seen the very same record for the
 *   record's leaseDurationSeconds by its own monotonic clock. It never compares renewTime with
 *   its wall clock, so skew between machines can neither cut a holder's term short nor keep a
 *   dead holder's lease alive forever.
 * - A leader whose renewals stop succeeding aborts its leading signal synchronously, from a timer,
 *   renewDeadline after it sent its last successful write (the one that took or renewed the
 *   lease), even while an API call hangs; and each renewal's calls are given a signal that aborts
 *   at that same instant (client-go's per-try context with the renew deadline), so no renewal
 *   outlives the term it tried to extend. The server applies the write after it was sent, and a
 *   standby observes it later still, so the leader is done at least leaseDuration - renewDeadline
 *   before a standby may take over. A read before the write does not count: one that hung (a
 *   proxy gone quiet and back) would otherwise eat into the term it led to.
 * - Every write names the resourceVersion it read, so of several candidates racing for a free or
 *   expired lease exactly one wins.
 * - On graceful cancel the leading signal aborts first, the leading work gets until the renew
 *   deadline to finish, and only then is the lease released; a standby woken by the release never
 *   overlaps with work still running here.
 */
import { realClock, type Clock, type Timer } from '../clock.js';
import { nopLogger, type Logger } from '../log.js';
import { JITTER_FACTOR, validateLeaderElectionConfig, type LeaderElectionConfig, type LeaderElectionConfigInput } from './config.js';
import type { LeaseCall } from '../../kube/coordination.js';
import { LeaseConflictError, toMicroTime, type LeaderRecord, type LeaseLock, type LeaseState } from './lock.js';

export interface LeaderCallbacks {
  /**
   * Called once leadership is won. Not awaited: leadership lasts until `signal` aborts, not until
   * this returns. A throw or rejection ends leadership and makes run() reject with that error.
   * A returned promise should settle soon after `signal` aborts; release waits for it.
   */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Called exactly once after onStartedLeading, when leadership ends for any reason. */
  onStoppedLeading(): void;
  /** Called whenever a different holder (possibly this candidate) is first observed. */
  onNewLeader?(identity: string): void;
}

/** Exported as leader_election_master_status by the metrics layer; the default does nothing. */
export interface LeaderElectionMetrics {
  setLeader(isLeader: boolean): void;
}

export const nopLeaderElectionMetrics: LeaderElectionMetrics = { setLeader() {} };

export interface LeaderElectorOptions {
  /** All waiting and expiry measurement. */
  clock?: Clock;
  /** Only for acquireTime/renewTime written into the lease; never compared with anything. */
  wallClock?: () => Date;
  logger?: Logger;
  metrics?: LeaderElectionMetrics;
  /** Jitter source in [0, 1); tests pin it. */
  random?: () => number;
}

/**
 * run() rejects with this when leadership was lost rather than given up. Do not try to lead again
 * in the same process: work started as leader may still be winding down. Exit and restart.
 */
export class LeadershipLostError extends Error {
  override readonly name = 'LeadershipLostError';
}

type Phase = 'idle' | 'acquiring' | 'leading' | 'stopping';

type Attempt = 'held' | 'heldByOther' | 'failed';

/** Why a leadership term ended; error is what the leading signal is aborted with. */
type TermEnd = { kind: 'cancelled' | 'lost' | 'failed'; error: unknown };

export class LeaderElector {
  private readonly config: LeaderElectionConfig;
  private readonly clock: Clock;
  private readonly wallClock: () => Date;
  private readonly log: Logger;
  private readonly metrics: LeaderElectionMetrics;
  private readonly random: () => number;
  /** Written into the lease; rounded up so the term we promise is never shorter than the one we keep. */
  private readonly leaseDurationSeconds: number;

  /** isLeader() is true only in 'leading'; 'stopping' means the leading signal is already aborted. */
  private phase: Phase = 'idle';
  /** Callbacks of the current run(), for onNewLeader from inside attempts. */
  private callbacks: LeaderCallbacks | undefined;
  /** The lease as last read or written by us; undefined until a call first succeeds. */
  private observed: LeaseState | undefined;
  /**
   * clock.now() when `observed.record` last changed. Another holder's lease expires relative to
   * this instant, never relative to its renewTime, which comes from a different machine's clock.
   */
  private observedChangedAt = 0;
  /**
   * clock.now() just before the write that last took or renewed our hold was sent, so it precedes
   * the server-side write; our leadership ends renewDeadline after it.
   */
  private heldSince = 0;
  /** clock.now() just before the latest lease write was sent; becomes heldSince when it succeeds. */
  private writeSentAt = 0;
  /** Last identity passed to onNewLeader, so each change of holder is reported once. */
  private reportedLeader = '';
  /**
   * A wake() not yet answered by an attempt that started after it. Any number of wake() calls
   * collapse into this one flag, so at most one extra attempt is ever queued behind one in flight.
   */
  private wakeRequested = false;
  /** Ends the acquire loop's current wait early; set only while it waits. */
  private interruptWait: (() => void) | undefined;

  /** Validates `config` (throws on unsafe timing) and fills in client-go defaults. */
  constructor(
    config: LeaderElectionConfigInput,
    private readonly lock: LeaseLock,
    options: LeaderElectorOptions = {},
  ) {
    this.config = validateLeaderElectionConfig(config);
    this.clock = options.clock ?? realClock;
    this.wallClock = options.wallClock ?? (() => new Date());
    this.metrics = options.metrics ?? nopLeaderElectionMetrics;
    this.random = options.random ?? Math.random;
    this.leaseDurationSeconds = Math.ceil(this.config.leaseDurationMs / 1000);
    this.log = (options.logger ?? nopLogger).child({
      component: 'leaderelection',
      lease: `${this.config.namespace}/${this.config.leaseName}`,
      identity: this.config.identity,
    });
  }

  /** Whether this candidate currently leads (its leading signal is live). */
  isLeader(): boolean {
    return this.phase === 'leading';
  }

  /** Holder of the lease as last observed; '' if unknown or released. */
  getLeader(): string {
    return this.observed?.record.holderIdentity ?? '';
  }

  /**
   * Asks a standby to try acquiring now instead of at its next retry, e.g. because a watch saw the
   * Lease change. Coalesces: calls before the attempt starts share it, calls during it queue one
   * more. Ignored unless acquiring; a leader renews on its own schedule.
   */
  wake(): void {
    if (this.phase !== 'acquiring') return;
    this.wakeRequested = true;
    this.interruptWait?.();
  }

  /**
   * Campaigns until `signal` aborts: acquires the lease, calls onStartedLeading, renews.
   *
   * Resolves when `signal` aborts: at once if not leading; if leading, after the leading signal
   * is aborted, the lease released (when releaseOnCancel) and onStoppedLeading called.
   * Rejects with LeadershipLostError when renewals failed for renewDeadline or another holder was
   * seen, and with the callback's error when onStartedLeading fails; onStoppedLeading has been
   * called by then. Either rejection means the process should exit non-zero (the manager does).
   * One run at a time.
   */
  async run(callbacks: LeaderCallbacks, signal: AbortSignal): Promise<void> {
    if (this.phase !== 'idle') throw new Error('LeaderElector.run: already running');
    this.callbacks = callbacks;
    this.phase = 'acquiring';
    this.metrics.setLeader(false);
    try {
      if (!(await this.acquire(signal))) return;
      if (signal.aborted) {
        // Won the lease after being told to stop: hand it straight back, nothing was started.
        if (this.config.releaseOnCancel) await this.release();
        return;
      }
      await this.lead(callbacks, signal);
    } finally {
      this.phase = 'idle';
      this.callbacks = undefined;
      this.wakeRequested = false;
    }
  }

  /** Tries at once, then after each retry wait or wake(); true once held, false when signal aborts. */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    this.log.info('trying to acquire lease');
    while (!signal.aborted) {
      // Cleared before reading, so a wake() arriving during the read queues one more attempt.
      this.wakeRequested = false;
      if ((await this.tryAcquireOrRenew()) === 'held') {
        this.heldSince = this.writeSentAt;
        this.log.info('acquired lease');
        return true;
      }
      // Jitter spreads standbys out so they do not all hit the API server in the same instant.
      await this.waitForRetry(this.config.retryPeriodMs * (1 + this.random() * JITTER_FACTOR), signal);
    }
    return false;
  }

  private waitForRetry(ms: number, signal: AbortSignal): Promise<void> {
    if (this.wakeRequested || signal.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        timer.cancel();
        signal.removeEventListener('abort', done);
        this.interruptWait = undefined;
        resolve();
      };
      const timer = this.clock.setTimer(ms, done);
      signal.addEventListener('abort', done, { once: true });
      this.interruptWait = done;
    });
  }

  /** One leadership term, from onStartedLeading to onStoppedLeading. */
  private async lead(callbacks: LeaderCallbacks, signal: AbortSignal): Promise<void> {
    const leading = new AbortController();
    const renewing = new AbortController();
    let watchdog: Timer | undefined;
    let settle!: (end: TermEnd) => void;
    const ended = new Promise<TermEnd>((resolve) => (settle = resolve));

    // Synchronous so the leading signal aborts in the very tick the deadline passes (split-brain
    // guard), whatever the renew loop is awaiting. The first reason wins.
    const end = (reason: TermEnd): void => {
      if (renewing.signal.aborted) return;
      renewing.abort();
      watchdog?.cancel();
      signal.removeEventListener('abort', onCancel);
      this.phase = 'stopping';
      this.metrics.setLeader(false);
      leading.abort(reason.error);
      settle(reason);
    };
    const onCancel = (): void => end({ kind: 'cancelled', error: new Error('leader election cancelled') });
    const lease = `${this.config.namespace}/${this.config.leaseName}`;
    const armWatchdog = (): void => {
      watchdog?.cancel();
      const left = this.heldSince + this.config.renewDeadlineMs - this.clock.now();
      watchdog = this.clock.setTimer(left, () =>
        end({
          kind: 'lost',
          error: new LeadershipLostError(`failed to renew lease ${lease} within renewDeadline (${this.config.renewDeadlineMs}ms)`),
        }),
      );
    };

    armWatchdog();
    this.phase = 'leading';
    this.metrics.setLeader(true);
    signal.addEventListener('abort', onCancel, { once: true });
    const work = this.startLeading(callbacks, leading.signal, (error) => end({ kind: 'failed', error }));
    const renewals = this.renew(renewing.signal, armWatchdog, (holder) =>
      end({ kind: 'lost', error: new LeadershipLostError(`lease ${lease} was taken over by ${holder || 'nobody'}`) }),
    );

    const reason = await ended;
    if (reason.kind === 'lost') {
      this.log.error('leadership lost', { reason: String(reason.error) });
      this.notifyStopped(callbacks);
      throw reason.error;
    }
    await this.stepDown(work, renewals);
    this.notifyStopped(callbacks);
    if (reason.kind === 'failed') throw reason.error;
  }

  /** Resolves (never rejects) once the leading work settles; a failure ends the term via `fail`. */
  private startLeading(callbacks: LeaderCallbacks, signal: AbortSignal, fail: (error: unknown) => void): Promise<void> {
    let work: Promise<void>;
    try {
      work = Promise.resolve(callbacks.onStartedLeading(signal));
    } catch (err) {
      work = Promise.reject(err);
    }
    return work.then(
      () => undefined,
      (err: unknown) => {
        // After the term ended this is usually the work reacting to the abort: not news.
        if (!signal.aborted) this.log.error('onStartedLeading failed', { error: String(err) });
        fail(err);
      },
    );
  }

  /**
   * Renews every retryPeriod until `stopped` aborts. Resolves only when no renewal is in flight,
   * so a release never races a renewal for the same resourceVersion.
   */
  private async renew(stopped: AbortSignal, onRenewed: () => void, onTaken: (holder: string) => void): Promise<void> {
    while (!stopped.aborted) {
      try {
        await this.clock.sleep(this.config.retryPeriodMs, stopped);
      } catch {
        return;
      }
      const attempt = await this.renewOnce();
      // A result arriving after the term ended must not extend it.
      if (stopped.aborted) return;
      if (attempt === 'held') {
        this.heldSince = this.writeSentAt;
        onRenewed();
      } else if (attempt === 'heldByOther') {
        // Someone else already acts as leader: waiting out the deadline would only prolong overlap.
        onTaken(this.getLeader());
      }
    }
  }

  /** One renewal round, its calls aborted when the renew deadline passes. */
  private async renewOnce(): Promise<Attempt> {
    const deadline = new AbortController();
    const ms = this.config.renewDeadlineMs;
    const timer = this.clock.setTimer(this.heldSince + ms - this.clock.now(), () =>
      deadline.abort(new Error(`renew deadline (${ms} ms) passed`)),
    );
    try {
      return await this.tryAcquireOrRenew(deadline.signal);
    } finally {
      timer.cancel();
    }
  }

  /**
   * After a cancel or failed work: give the work and any in-flight renewal until our leadership
   * would lapse anyway, then release. If they overrun, releasing would invite a standby to start
   * beside them, so the lease is left to expire instead.
   */
  private async stepDown(work: Promise<void>, renewals: Promise<void>): Promise<void> {
    const left = this.heldSince + this.config.renewDeadlineMs - this.clock.now();
    const drained = await this.within(left, Promise.all([work, renewals]));
    if (!this.config.releaseOnCancel) return;
    if (!drained) {
      this.log.warn('leading work did not finish before the renew deadline; leaving the lease to expire');
      return;
    }
    await this.release();
  }

  private within(ms: number, done: Promise<unknown>): Promise<boolean> {
    if (ms <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const timer = this.clock.setTimer(ms, () => resolve(false));
      const finish = (): void => {
        timer.cancel();
        resolve(true);
      };
      done.then(finish, finish);
    });
  }

  /**
   * Clears the holder so standbys need not wait out leaseDuration. leaseDurationSeconds 1 keeps
   * candidates that do not treat an empty holder as free from waiting long. Best effort: on
   * failure the lease simply expires.
   */
  private async release(): Promise<void> {
    const current = this.observed;
    if (!current || current.record.holderIdentity !== this.config.identity) return;
    const now = toMicroTime(this.wallClock());
    const released: LeaderRecord = {
      holderIdentity: '',
      leaseDurationSeconds: 1,
      acquireTime: now,
      renewTime: now,
      leaderTransitions: current.record.leaderTransitions,
    };
    try {
      this.observe(await this.lock.update(released, current.resourceVersion));
      this.log.info('released lease');
    } catch (err) {
      this.log.warn('failed to release lease; standbys take over once it expires', { error: String(err) });
    }
  }

  /**
   * client-go's tryAcquireOrRenew: one read-decide-write round. Never throws; errors are logged
   * and reported as 'failed' so the callers' deadlines decide what a failure means. `signal`
   * ends its calls (a leader's renew deadline).
   */
  private async tryAcquireOrRenew(signal?: AbortSignal): Promise<Attempt> {
    const now = toMicroTime(this.wallClock());
    const identity = this.config.identity;
    const mine = (acquireTime: string | undefined, leaderTransitions: number): LeaderRecord => ({
      holderIdentity: identity,
      leaseDurationSeconds: this.leaseDurationSeconds,
      acquireTime: acquireTime ?? now,
      renewTime: now,
      leaderTransitions,
    });

    // Fast path for a leader: write on top of what we last wrote, saving the read. A conflict
    // means someone else wrote; the slow path below finds out who.
    const held = this.observed;
    if (this.phase === 'leading' && held?.record.holderIdentity === identity) {
      try {
        this.observe(
          await this.write(signal, (call) =>
            this.lock.update(mine(held.record.acquireTime, held.record.leaderTransitions), held.resourceVersion, call),
          ),
        );
        return 'held';
      } catch (err) {
        this.log.debug('optimistic renewal failed; re-reading lease', { error: String(err) });
      }
    }

    let current: LeaseState | undefined;
    try {
      if (signal?.aborted) return this.failed(signal.reason);
      current = await this.lock.get({ signal });
      if (!current) {
        this.observe(await this.write(signal, (call) => this.lock.create(mine(now, 0), call)));
        return 'held';
      }
    } catch (err) {
      return this.failed(err);
    }

    this.observe(current);
    const { record } = current;
    let next: LeaderRecord;
    if (record.holderIdentity === identity) {
      next = mine(record.acquireTime, record.leaderTransitions);
    } else {
      // An empty holder was released on purpose and is free at once.
      if (record.holderIdentity !== '' && !this.observedExpired()) return 'heldByOther';
      next = mine(now, record.leaderTransitions + 1);
    }
    try {
      this.observe(await this.write(signal, (call) => this.lock.update(next, current.resourceVersion, call)));
      return 'held';
    } catch (err) {
      return this.failed(err);
    }
  }

  /**
   * Sends a lease write, noting in writeSentAt the instant before each of its attempts left: one
   * answered 429 with Retry-After was not served, so the hold dates from the retry that was, not
   * from the first try (which could spend most of the renew deadline waiting on the server).
   */
  private write(signal: AbortSignal | undefined, send: (call: LeaseCall) => Promise<LeaseState>): Promise<LeaseState> {
    const sent = (): void => {
      this.writeSentAt = this.clock.now();
    };
    sent(); // for a lock that never calls onSend
    return send({ signal, onSend: sent });
  }

  private failed(err: unknown): Attempt {
    if (err instanceof LeaseConflictError) {
      this.log.debug('lost a race for the lease', { error: err.message });
    } else {
      this.log.warn('lease call failed', { error: String(err) });
    }
    return 'failed';
  }

  /** Whether the observed record has stood unchanged, by our clock, for the term its holder promised. */
  private observedExpired(): boolean {
    const seconds = this.observed?.record.leaseDurationSeconds ?? 0;
    // A record without a usable duration gets our own, rather than counting as expired at once.
    const durationMs = seconds > 0 ? seconds * 1000 : this.config.leaseDurationMs;
    return this.clock.now() - this.observedChangedAt >= durationMs;
  }

  private observe(state: LeaseState): void {
    if (!this.observed || !sameRecord(this.observed.record, state.record)) {
      this.observedChangedAt = this.clock.now();
    }
    this.observed = state;
    this.reportLeader(state.record.holderIdentity);
  }

  private reportLeader(holder: string): void {
    if (holder === '' || holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    this.log.info('new leader observed', { leader: holder });
    try {
      this.callbacks?.onNewLeader?.(holder);
    } catch (err) {
      this.log.error('onNewLeader threw', { error: String(err) });
    }
  }

  private notifyStopped(callbacks: LeaderCallbacks): void {
    try {
      callbacks.onStoppedLeading();
    } catch (err) {
      this.log.error('onStoppedLeading threw', { error: String(err) });
    }
  }
}

function sameRecord(a: LeaderRecord, b: LeaderRecord): boolean {
  return (
    a.holderIdentity === b.holderIdentity &&
    a.leaseDurationSeconds === b.leaseDurationSeconds &&
    a.acquireTime === b.acquireTime &&
    a.renewTime === b.renewTime &&
    a.leaderTransitions === b.leaderTransitions
  );
}
