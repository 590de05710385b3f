/**
 * The controller-runtime peers (scripts/lab/bench/peer, Echo only), two styles of one reconciler
 * written here on controller-runtime v0.25.2 (PEER_STYLE): `controller-runtime-naive` (its cached
 * status the only memory of a run, status merge-patched without the resourceVersion) and
 * `controller-runtime-advised` (as controller-runtime's docs advise: uncached reads through the
 * APIReader before a create, the run claimed in status with an optimistic lock first, status
 * updates carrying the resourceVersion; peer/advised.go). Each as the campaign runs it: its opt-in
 * leader election on (LEADER_ELECTION=true, controller-runtime's elector, the identity HA_NODE_ID)
 * with the same lease timing as ours, watching the schedule's namespace only.
 *
 * Its RBAC is what its code calls, as a kubebuilder project's markers would grant it: read Echos,
 * merge-patch (naive) or update (advised) their status, update their finalizers (its Jobs' owner references set
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
  { apiGroups: ['mmontes.io'], resources: ['echos/status'], verbs: ['patch', 'update'] },
  { apiGroups: ['mmontes.io'], resources: ['echos/finalizers'], verbs: ['update'] },
  { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
];

export type PeerStyle = 'naive' | 'advised';

export function controllerRuntimeProgram(argv: readonly string[], style: PeerStyle): Program {
  const replicas = probedReplicas();
  return {
    name: `controller-runtime-${style}`,
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
        PEER_STYLE: style,
        ...env,
      }));
    },
    ready: (p) => replicas.ready(p),
  };
}
