/**
 * The controller-runtime peer (scripts/lab/bench/peer, Echo only) as the campaign runs it: its opt-in
 * leader election on (LEADER_ELECTION=true, controller-runtime's elector, the identity HA_NODE_ID)
 * with the same lease timing as ours, watching the schedule's namespace only.
 *
 * Its RBAC is what its code calls, as a kubebuilder project's markers would grant it: read Echos,
 * merge-patch their status, update their finalizers (its Jobs' owner references set
 * blockOwnerDeletion, which the OwnerReferencesPermissionEnforcement admission plugin checks that
 * way), read, create and delete Jobs, record core/v1 Events (create, and patch to count repeats),
 * and the Lease (client-go's LeaseLock: create, then get and update by name).
 *
 * Ready: /readyz answers 200 once its Echo and Job caches synced (controller-runtime starts the
 * caches on a standby too).
 */
import type { PolicyRule } from '../../../../infra/rbac.js';
import { freePort } from '../../../testbed/controlplane/cluster.js';
import { probedReplicas } from './replica.js';
import { namespacedRbac } from './rbac.js';
import { LEASE_NAME, type Program } from './types.js';
import { OUR_LEASE } from './echoperator.js';

const SERVICE_ACCOUNT = 'echoperator-peer';

const PEER_RULES: PolicyRule[] = [
  { apiGroups: ['mmontes.io'], resources: ['echos'], verbs: ['get', 'list', 'watch'] },
  { apiGroups: ['mmontes.io'], resources: ['echos/status'], verbs: ['patch'] },
  { apiGroups: ['mmontes.io'], resources: ['echos/finalizers'], verbs: ['update'] },
  { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
];

export function controllerRuntimeProgram(argv: readonly string[]): Program {
  const replicas = probedReplicas();
  return {
    name: 'controller-runtime',
    kinds: ['Echo'],
    leaderElection: true,
    lease: OUR_LEASE,
    rbac: (namespace) => namespacedRbac(SERVICE_ACCOUNT, namespace, PEER_RULES),
    start: async ({ kubeconfig, replica, namespace, leaseNamespace, env }) => {
      const metricsPort = await freePort();
      return replicas.spawn(replica, argv, (healthPort) => ({
        KUBECONFIG: kubeconfig,
        WATCH_NAMESPACES: namespace,
        LEADER_ELECTION: 'true',
        LEASE_NAMESPACE: leaseNamespace,
        LEASE_NAME,
        LEASE_DURATION_SECONDS: String(OUR_LEASE.durationS),
        RENEW_DEADLINE_SECONDS: String(OUR_LEASE.renewS),
        RETRY_PERIOD_SECONDS: String(OUR_LEASE.retryS),
        HA_NODE_ID: replica,
        HEALTH_PORT: String(healthPort),
        METRICS_PORT: String(metricsPort),
        LOG_LEVEL: 'info',
        ...env,
      }));
    },
    ready: (p) => replicas.ready(p),
  };
}
