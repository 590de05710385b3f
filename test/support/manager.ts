/**
 * What unit tests start a manager from: its settings (one worker, no resync, no leader election)
 * and the operator's settings as their defaults, which every controller's context is made from.
 */
import { parseSettings, type Settings } from '../../src/config/index.js';
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

/** The operator's settings with every default, independent of the machine and its environment. */
export function testSettings(): Settings {
  return parseSettings([], {}, { hostname: () => 'test', randomHex: (n) => '0'.repeat(2 * n), inClusterNamespace: () => undefined });
}
