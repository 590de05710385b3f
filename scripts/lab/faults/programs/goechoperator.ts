/**
 * The Go echoperator (github.com/mmontes11/echoperator, client-go v0.21), built from its mirrored
 * public source by scripts/lab/migration/goechoperator.ts, as the campaign runs it: HA on (its own
 * client-go leader election, ReleaseOnCancel true), as the ServiceAccount `echoperator` with the
 * ClusterRole its Helm chart renders for ha.enabled=true.
 *
 * What its source does, and so what the campaign can expect of it (its config.go, runner.go,
 * controller/*.go at the mirrored HEAD):
 *  - NAMESPACE is where it creates every Job and CronJob AND where its Lease lives; its informers
 *    watch all namespaces (hence a ClusterRole). Run it with namespace = leaseNamespace, and
 *    expect it to act on Echos of any namespace that still exists, creating their Jobs in its own.
 *  - It reacts to an Echo's creation only (no edits, no deletes: the garbage collector removes
 *    the Jobs of a deleted Echo), writes no status, and updates a CronJob when a ScheduledEcho
 *    changes.
 *  - Lease timings are whole seconds (env.GetDuration parses an integer; anything else silently
 *    falls back to its 15/10/2 default), so its lease is 4/3/1, not ours.
 *  - It has no probe server. Ready: its log says "controller ready" (the leader, after its caches
 *    synced) or "leader elected: '<other>'" (a standby that saw the holder).
 */
import { rmSync } from 'node:fs';
import type { PolicyRule } from '../../../../infra/rbac.js';
import { buildGoEchoperator, goClusterRole, goSource } from '../../migration/goechoperator.js';
import { log } from '../../bench/log.js';
import { logged, spawnReplica } from './replica.js';
import { grant, serviceAccount, serviceAccountIdentity } from './rbac.js';
import { LEASE_NAME, type Program } from './types.js';

const GO_LEASE = { durationS: 4, renewS: 3, retryS: 1 } as const;
const SERVICE_ACCOUNT = 'echoperator';

/** Its chart's lease rule when ha.enabled (templates/rbac/clusterrole.yaml), cluster-wide as there. */
const CHART_HA_RULE: PolicyRule = {
  apiGroups: ['coordination.k8s.io'],
  resources: ['leases'],
  verbs: ['get', 'watch', 'create', 'update'],
};

/** The binary, built once per source commit into the cache. */
export function goEchoperatorBinary(): string {
  const src = goSource();
  try {
    return buildGoEchoperator(src, log);
  } finally {
    rmSync(src.dir, { recursive: true, force: true });
  }
}

export function goEchoperatorProgram(binary: string): Program {
  return {
    name: 'go-echoperator',
    kinds: ['Echo', 'ScheduledEcho'],
    leaderElection: true,
    lease: GO_LEASE,
    rbac: (namespace) => {
      const sa = { name: SERVICE_ACCOUNT, namespace };
      const { rules } = goClusterRole() as { rules: PolicyRule[] };
      return {
        ...serviceAccountIdentity(sa),
        manifests: [
          serviceAccount(sa),
          // Cluster-scoped, so named after the namespace: one per schedule.
          ...grant(sa, `go-echoperator-${namespace}`, [...rules, CHART_HA_RULE]),
        ],
      };
    },
    start: ({ kubeconfig, replica, namespace, leaseNamespace, env }) => {
      if (leaseNamespace !== namespace)
        return Promise.reject(
          new Error(
            `go-echoperator keeps its Lease in NAMESPACE, where it also creates Jobs: leaseNamespace (${leaseNamespace}) must equal namespace (${namespace})`,
          ),
        );
      return Promise.resolve(
        spawnReplica({
          replica,
          argv: [binary],
          env: {
            KUBECONFIG: kubeconfig,
            NAMESPACE: namespace,
            NUM_WORKERS: '4',
            HA_ENABLED: 'true',
            HA_NODE_ID: replica,
            HA_LEASE_LOCK_NAME: LEASE_NAME,
            HA_LEASE_DURATION_SECONDS: String(GO_LEASE.durationS),
            HA_RENEW_DEADLINE_SECONDS: String(GO_LEASE.renewS),
            HA_RETRY_PERIOD_SECONDS: String(GO_LEASE.retryS),
            METRICS_ENABLED: 'false',
            ENV: 'production',
            LOG_LEVEL: 'info',
            ...env,
          },
        }),
      );
    },
    ready: (p) => logged(p, /controller ready|leader elected: '/),
  };
}
