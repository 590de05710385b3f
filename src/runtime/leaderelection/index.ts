/**
 * Leader election over a coordination.k8s.io/v1 Lease, with client-go semantics: see elector.ts
 * for the guarantees, config.ts for the timing rules, lock.ts for the Lease mapping.
 */
export {
  JITTER_FACTOR,
  leaderElectionDefaults,
  validateLeaderElectionConfig,
  type LeaderElectionConfig,
  type LeaderElectionConfigInput,
} from './config.js';
export {
  KubeLeaseLock,
  LeaseConflictError,
  toMicroTime,
  type LeaderRecord,
  type LeaseLock,
  type LeaseState,
  type MicroTime,
} from './lock.js';
export {
  LeaderElector,
  LeadershipLostError,
  nopLeaderElectionMetrics,
  type LeaderCallbacks,
  type LeaderElectionMetrics,
  type LeaderElectorOptions,
} from './elector.js';
