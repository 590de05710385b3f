/** The manager settings unit tests start from: one worker, no resync, no leader election. */
import type { ManagerConfig } from '../../src/manager/manager.js';

export function testManagerConfig(overrides: Partial<ManagerConfig> = {}): ManagerConfig {
  return {
    namespace: 'ops',
    watchNamespaces: undefined,
    workers: 1,
    resyncPeriodMs: 0,
    shutdownTimeoutMs: 1000,
    leaderElection: undefined,
    ...overrides,
  };
}
