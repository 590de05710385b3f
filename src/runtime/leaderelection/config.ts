/**
 * Leader election settings and the rules that make them safe.
 *
 * The timing rules are client-go's (k8s.io/client-go/tools/leaderelection), because they are
 * what the guarantee rests on: a leader gives up within renewDeadline of its last successful
 * renewal, and a standby takes over only after the lease has stood unchanged for leaseDuration,
 * so leaseDuration - renewDeadline is the margin that absorbs clock-rate drift and scheduling
 * delays. Settings that break the ordering are rejected at startup rather than risking two
 * leaders at run time.
 */

/** client-go's JitterFactor: acquire retries wait retryPeriod plus up to this many retryPeriods. */
export const JITTER_FACTOR = 1.2;

/** client-go's defaults, in seconds: what the settings and the install default to. */
export const LEASE_DEFAULT_SECONDS = { leaseDuration: 15, renewDeadline: 10, retryPeriod: 2 } as const;
/** The longest any lease timing may be, in seconds: an hour (settings and the install refuse more). */
export const LEASE_MAX_SECONDS = 3600;

/** Lease timing in any one unit. */
export interface LeaseTiming {
  leaseDuration: number;
  renewDeadline: number;
  retryPeriod: number;
}

/**
 * The rule a lease timing breaks, undefined when it is safe: 'leaseDuration' when
 * leaseDuration <= renewDeadline (a standby could take over while the leader still leads),
 * 'renewDeadline' when renewDeadline <= JITTER_FACTOR x retryPeriod (a leader would get no second
 * try to renew). Every place that accepts lease settings checks with this, and words the error
 * in its own names.
 */
export function brokenLeaseRule(t: LeaseTiming): 'leaseDuration' | 'renewDeadline' | undefined {
  if (t.leaseDuration <= t.renewDeadline) return 'leaseDuration';
  if (t.renewDeadline <= JITTER_FACTOR * t.retryPeriod) return 'renewDeadline';
  return undefined;
}

export interface LeaderElectionConfig {
  /** Name of the coordination.k8s.io/v1 Lease all candidates contend for. */
  leaseName: string;
  namespace: string;
  /**
   * This candidate's name in the lease. Must be unique per process (e.g. pod name plus a random
   * suffix): a candidate that finds its own identity in the lease treats it as already held.
   */
  identity: string;
  /** How long a standby waits, by its own clock, on an unchanged lease before taking it over. */
  leaseDurationMs: number;
  /** How long a leader keeps leading without a successful renewal. */
  renewDeadlineMs: number;
  /** Pause between acquire attempts (plus jitter) and between renewals. */
  retryPeriodMs: number;
  /** Clear the holder when the run signal aborts, so a standby takes over at once. */
  releaseOnCancel: boolean;
}

/** What a caller must name; every timing setting has a client-go default. */
export type LeaderElectionConfigInput = Pick<LeaderElectionConfig, 'leaseName' | 'namespace' | 'identity'> &
  Partial<Omit<LeaderElectionConfig, 'leaseName' | 'namespace' | 'identity'>>;

export const leaderElectionDefaults = {
  leaseDurationMs: LEASE_DEFAULT_SECONDS.leaseDuration * 1000,
  renewDeadlineMs: LEASE_DEFAULT_SECONDS.renewDeadline * 1000,
  retryPeriodMs: LEASE_DEFAULT_SECONDS.retryPeriod * 1000,
  releaseOnCancel: true,
} as const satisfies Partial<LeaderElectionConfig>;

/**
 * Fills in defaults and checks leaseDuration > renewDeadline > JITTER_FACTOR x retryPeriod > 0
 * and non-empty names. Throws an Error naming the offending setting.
 */
export function validateLeaderElectionConfig(input: LeaderElectionConfigInput): LeaderElectionConfig {
  const config: LeaderElectionConfig = {
    leaseName: input.leaseName,
    namespace: input.namespace,
    identity: input.identity,
    leaseDurationMs: input.leaseDurationMs ?? leaderElectionDefaults.leaseDurationMs,
    renewDeadlineMs: input.renewDeadlineMs ?? leaderElectionDefaults.renewDeadlineMs,
    retryPeriodMs: input.retryPeriodMs ?? leaderElectionDefaults.retryPeriodMs,
    releaseOnCancel: input.releaseOnCancel ?? leaderElectionDefaults.releaseOnCancel,
  };

  for (const key of ['leaseName', 'namespace', 'identity'] as const) {
    if (typeof config[key] !== 'string' || config[key].trim() === '') {
      throw new Error(`leader election: ${key} must be a non-empty string`);
    }
  }
  for (const key of ['leaseDurationMs', 'renewDeadlineMs', 'retryPeriodMs'] as const) {
    if (!Number.isFinite(config[key]) || config[key] <= 0) {
      throw new Error(`leader election: ${key} must be a positive number of milliseconds, got ${config[key]}`);
    }
  }
  const broken = brokenLeaseRule({
    leaseDuration: config.leaseDurationMs,
    renewDeadline: config.renewDeadlineMs,
    retryPeriod: config.retryPeriodMs,
  });
  if (broken === 'leaseDuration') {
    throw new Error(
      `leader election: leaseDurationMs (${config.leaseDurationMs}) must be greater than renewDeadlineMs (${config.renewDeadlineMs})`,
    );
  }
  if (broken === 'renewDeadline') {
    throw new Error(
      `leader election: renewDeadlineMs (${config.renewDeadlineMs}) must be greater than ` +
        `${JITTER_FACTOR} x retryPeriodMs (${JITTER_FACTOR * config.retryPeriodMs})`,
    );
  }
  return config;
}
