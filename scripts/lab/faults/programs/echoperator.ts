/**
 * Our operator (or a mutant of it: the same program from another build) as the campaign runs it:
 * HA on with the campaign's short lease, watching the schedule's namespace only, as the
 * ServiceAccount `echoperator` with the RBAC our constructs synthesize for WATCH_NAMESPACES set to
 * that one namespace (infra/echoperator.ts): the operator's Role there (operatorRules) and the
 * leader-election Role (leaderElectionRules), each bound to the ServiceAccount.
 *
 * Ready: /readyz answers 200 once its caches synced, on the leader and on a standby alike.
 */
import { operatorRules } from '../../../../infra/rbac.js';
import { probedReplicas } from './replica.js';
import { namespacedRbac } from './rbac.js';
import { LEASE_NAME, type Program } from './types.js';

/**
 * Short, for quick takeovers in a schedule of seconds, within what the settings accept
 * (leaseDuration > renewDeadline > 1.2 x retryPeriod, see src/runtime/leaderelection/config.ts).
 */
export const OUR_LEASE = { durationS: 4, renewS: 3, retryS: 0.5 } as const;

const SERVICE_ACCOUNT = 'echoperator';

export function echoperatorProgram(name: string, argv: readonly string[]): Program {
  const replicas = probedReplicas();
  return {
    name,
    kinds: ['Echo', 'ScheduledEcho'],
    leaderElection: true,
    lease: OUR_LEASE,
    rbac: (namespace) => namespacedRbac(SERVICE_ACCOUNT, namespace, operatorRules()),
    start: ({ kubeconfig, replica, namespace, leaseNamespace, env }) =>
      replicas.spawn(replica, argv, (healthPort) => ({
        KUBECONFIG: kubeconfig,
        WATCH_NAMESPACES: namespace,
        NAMESPACE: leaseNamespace,
        HA_ENABLED: 'true',
        HA_NODE_ID: replica,
        HA_LEASE_LOCK_NAME: LEASE_NAME,
        HA_LEASE_DURATION_SECONDS: String(OUR_LEASE.durationS),
        HA_RENEW_DEADLINE_SECONDS: String(OUR_LEASE.renewS),
        HA_RETRY_PERIOD_SECONDS: String(OUR_LEASE.retryS),
        HEALTH_PORT: String(healthPort),
        // Nothing scrapes it here; off, it needs no port and no TokenReview grant.
        METRICS_ENABLED: 'false',
        LOG_FORMAT: 'json',
        LOG_LEVEL: 'info',
        ...env,
      })),
    ready: (p) => replicas.ready(p),
  };
}
