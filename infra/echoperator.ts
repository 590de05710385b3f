/**
 * Echoperator: everything a cluster needs to run the operator, as one reusable cdk8s construct.
 *
 * It emits low-level, typed Kubernetes objects (the `k8s.Kube*` classes of infra/imports, generated
 * from Kubernetes 1.31's OpenAPI, and plain
 * `ApiObject`s for the CRDs, which come verbatim from src/api) rather than cdk8s-plus's
 * high-level workloads: the operator needs exact control over RBAC, the service account token,
 * the security context and resources, and every object gets an explicit, stable name (no
 * cdk8s-generated hashes), so the synthesized YAML is byte-identical from run to run.
 *
 * Objects, in the order they are emitted (and applied by a plain `kubectl apply -f`):
 *   Namespace (optional) -> CRDs (optional) -> ServiceAccount -> ClusterRole + ClusterRoleBinding
 *   (all namespaces) or one Role + RoleBinding per watched namespace -> leader-election Role +
 *   RoleBinding (HA) -> metrics review ClusterRole + ClusterRoleBinding and metrics-reader
 *   ClusterRole (metrics over HTTPS) -> tenant editor and viewer ClusterRoles per kind (on by
 *   default) -> the confinement ValidatingAdmissionPolicy + binding (on by default) -> ConfigMap
 *   -> Deployment -> metrics Service (metrics on) -> metrics NetworkPolicy (opt-in) ->
 *   PodDisruptionBudget (HA) -> Grafana dashboard ConfigMap (opt-in).
 */
import { ApiObject } from 'cdk8s';
import * as k8s from './imports/k8s.js';
import { Construct } from 'constructs';
import { installedCrds } from './crds.js';
import {
  CONFIG_CHECKSUM_ANNOTATION,
  ECHOPERATOR_VERSION,
  METRICS_CERT_MOUNT,
  operatorSettings,
  resolveEchoperatorProps,
  settingsChecksum,
  type EchoperatorProps,
  type ResolvedEchoperatorProps,
  type ResourceQuantities,
} from './props.js';
import { addConfinementPolicy } from './confinement.js';
import { addTenantRoles } from './tenant-roles.js';
import { addServiceMonitor } from './monitoring/service-monitor.js';
import { addDashboardConfigMap } from './monitoring/dashboard-configmap.js';
import { addPrometheusRule } from './monitoring/prometheus-rule.js';
import { leaderElectionRules, metricsAuthRules, metricsReaderRules, operatorRules } from './rbac.js';

export * from './props.js';
export * from './rbac.js';

/**
 * Installs the echoperator: CRDs, ServiceAccount, least-privilege RBAC, settings ConfigMap,
 * hardened Deployment, and (as configured) the metrics Service and the HA PodDisruptionBudget.
 * Props are validated when the construct is created; see {@link EchoperatorProps}.
 */
export class Echoperator extends Construct {
  /** The props with defaults filled in. */
  public readonly config: ResolvedEchoperatorProps;
  /** The operator's namespace. */
  public readonly namespace: string;
  /** The ServiceAccount the operator runs as, in {@link namespace}. */
  public readonly serviceAccountName: string;
  /** The name of the ClusterRole and ClusterRoleBinding (used only when watching all namespaces). */
  public readonly clusterRoleName: string;
  /** The ValidatingAdmissionPolicy and binding confining the ServiceAccount, when confineServiceAccount is on. */
  public readonly confinementPolicyName?: string;
  /**
   * The ClusterRole granting `get` on the metrics path, to bind Prometheus' ServiceAccount to
   * (`<name>-metrics-reader`, or `<name>-<namespace>-metrics-reader` as for the ClusterRole);
   * undefined when metrics are off or served without authentication.
   */
  public readonly metricsReaderRoleName: string | undefined;
  /** The editor and viewer ClusterRole of each kind, aggregated into admin, edit and view (none with tenantRoles off). */
  public readonly tenantRoleNames: readonly string[];
  /** The settings ConfigMap's name, in {@link namespace}. */
  public readonly configMapName: string;
  /** The operator's environment as stored in the settings ConfigMap. */
  public readonly settings: Readonly<Record<string, string>>;
  /** Hash of {@link settings}, annotated on the pod template. */
  public readonly settingsChecksum: string;
  public readonly deployment: k8s.KubeDeployment;

  constructor(scope: Construct, id: string, props: EchoperatorProps = {}) {
    super(scope, id);
    const r = resolveEchoperatorProps(props);
    this.config = r;
    this.namespace = r.namespace;
    this.serviceAccountName = r.name;
    this.clusterRoleName = r.namespace === r.name ? r.name : `${r.name}-${r.namespace}`;
    this.configMapName = `${r.name}-config`;
    this.settings = operatorSettings(r);
    this.settingsChecksum = settingsChecksum(this.settings);

    const selector = { 'app.kubernetes.io/name': r.appName, 'app.kubernetes.io/instance': r.instance };
    const labels = {
      ...r.labels,
      ...selector,
      'app.kubernetes.io/version': ECHOPERATOR_VERSION,
      'app.kubernetes.io/component': 'operator',
      'app.kubernetes.io/part-of': 'echoperator',
      'app.kubernetes.io/managed-by': 'cdk8s',
    };
    const meta = (name: string, namespace?: string): k8s.ObjectMeta => ({ name, ...(namespace ? { namespace } : {}), labels });
    const ns = r.namespace;

    if (r.createNamespace) {
      new k8s.KubeNamespace(this, 'Namespace', {
        metadata: {
          name: ns,
          labels: {
            ...labels,
            'pod-security.kubernetes.io/enforce': 'restricted',
            'pod-security.kubernetes.io/enforce-version': 'latest',
          },
        },
      });
    }

    if (r.crds.enabled) {
      // src/api's, no extra labels: the same objects as crds/ (save Helm's keep annotation), so
      // installing from either source (or both, as the tests do) never fights over fields.
      for (const crd of installedCrds(r.crds.keep)) new ApiObject(this, `Crd-${crd.spec.names.kind}`, crd);
    }

    new k8s.KubeServiceAccount(this, 'ServiceAccount', {
      metadata: meta(this.serviceAccountName, ns),
      // The operator talks to the API server with this account's token.
      automountServiceAccountToken: true,
    });
    const subject: k8s.Subject = { kind: 'ServiceAccount', name: this.serviceAccountName, namespace: ns };

    if (r.watchNamespaces === undefined) {
      new k8s.KubeClusterRole(this, 'ClusterRole', { metadata: meta(this.clusterRoleName), rules: operatorRules() });
      new k8s.KubeClusterRoleBinding(this, 'ClusterRoleBinding', {
        metadata: meta(this.clusterRoleName),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: this.clusterRoleName },
        subjects: [subject],
      });
    } else {
      for (const watched of r.watchNamespaces) {
        new k8s.KubeRole(this, `Role-${watched}`, { metadata: meta(r.name, watched), rules: operatorRules() });
        new k8s.KubeRoleBinding(this, `RoleBinding-${watched}`, {
          metadata: meta(r.name, watched),
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: r.name },
          subjects: [subject],
        });
      }
    }

    if (r.ha.enabled) {
      const leName = `${r.name}-leader-election`;
      new k8s.KubeRole(this, 'LeaderElectionRole', { metadata: meta(leName, ns), rules: leaderElectionRules(r.ha.leaseName) });
      new k8s.KubeRoleBinding(this, 'LeaderElectionRoleBinding', {
        metadata: meta(leName, ns),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: leName },
        subjects: [subject],
      });
    }

    const metricsAuth = r.metrics.enabled && !r.metrics.insecurePlainHttp;
    this.metricsReaderRoleName = metricsAuth ? `${this.clusterRoleName}-metrics-reader` : undefined;
    if (metricsAuth) {
      const authName = `${this.clusterRoleName}-metrics-auth`;
      new k8s.KubeClusterRole(this, 'MetricsAuthRole', { metadata: meta(authName), rules: metricsAuthRules() });
      new k8s.KubeClusterRoleBinding(this, 'MetricsAuthRoleBinding', {
        metadata: meta(authName),
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: authName },
        subjects: [subject],
      });
      new k8s.KubeClusterRole(this, 'MetricsReaderRole', {
        metadata: meta(this.metricsReaderRoleName!),
        rules: metricsReaderRules(r.metrics.path),
      });
    }

    this.tenantRoleNames = r.tenantRoles ? addTenantRoles(this, { namePrefix: this.clusterRoleName, labels }) : [];

    if (r.confineServiceAccount) {
      // Before the Deployment, so the operator never runs unconfined; named like the ClusterRole
      // (cluster-scoped too), so installs in two namespaces never collide.
      this.confinementPolicyName = `${this.clusterRoleName}-confinement`;
      addConfinementPolicy(this, {
        name: this.confinementPolicyName,
        serviceAccount: { name: this.serviceAccountName, namespace: ns },
        jobImage: r.jobImage,
        jobMaxResources: r.jobMaxResources,
        labels,
      });
    }

    new k8s.KubeConfigMap(this, 'ConfigMap', { metadata: meta(this.configMapName, ns), data: { ...this.settings } });

    const fieldRef = (fieldPath: string): k8s.EnvVarSource => ({ fieldRef: { apiVersion: 'v1', fieldPath } });
    const replicas = r.ha.enabled ? r.ha.replicas : 1;
    const ports: k8s.ContainerPort[] = [{ name: 'health', containerPort: r.healthPort, protocol: 'TCP' }];
    if (r.metrics.enabled) ports.unshift({ name: 'metrics', containerPort: r.metrics.port, protocol: 'TCP' });

    this.deployment = new k8s.KubeDeployment(this, 'Deployment', {
      metadata: meta(r.name, ns),
      spec: {
        replicas,
        revisionHistoryLimit: 5,
        selector: { matchLabels: selector },
        // Without leader election two pods must never run at once: Recreate stops the old pod
        // before starting the new one. With it, surge one pod and let the elector hand over
        // (the old leader releases the lease on SIGTERM).
        strategy: r.ha.enabled
          ? {
              type: 'RollingUpdate',
              rollingUpdate: { maxSurge: k8s.IntOrString.fromNumber(1), maxUnavailable: k8s.IntOrString.fromNumber(0) },
            }
          : { type: 'Recreate' },
        template: {
          // podLabels and podAnnotations cannot set the install's own keys (checked with the props).
          metadata: {
            labels: { ...labels, ...r.pod.podLabels },
            annotations: { ...r.pod.podAnnotations, [CONFIG_CHECKSUM_ANNOTATION]: this.settingsChecksum },
          },
          spec: {
            serviceAccountName: this.serviceAccountName,
            ...podPlacement(r),
            automountServiceAccountToken: true,
            enableServiceLinks: false,
            terminationGracePeriodSeconds: r.terminationGracePeriodSeconds,
            securityContext: {
              runAsNonRoot: true,
              runAsUser: 65532,
              runAsGroup: 65532,
              seccompProfile: { type: 'RuntimeDefault' },
            },
            ...(r.ha.enabled
              ? {
                  topologySpreadConstraints: [
                    {
                      maxSkew: 1,
                      topologyKey: 'kubernetes.io/hostname',
                      whenUnsatisfiable: 'ScheduleAnyway',
                      labelSelector: { matchLabels: selector },
                      // Count only pods of the same ReplicaSet, so a rollout spreads too.
                      matchLabelKeys: ['pod-template-hash'],
                    },
                  ],
                }
              : {}),
            containers: [
              {
                name: 'operator',
                image: r.image,
                imagePullPolicy: r.imagePullPolicy,
                command: r.command,
                ...(r.args.length ? { args: r.args } : {}),
                envFrom: [{ configMapRef: { name: this.configMapName } }],
                env: [
                  { name: 'POD_NAME', valueFrom: fieldRef('metadata.name') },
                  { name: 'POD_NAMESPACE', valueFrom: fieldRef('metadata.namespace') },
                  { name: 'NAMESPACE', valueFrom: fieldRef('metadata.namespace') },
                  { name: 'HA_NODE_ID', valueFrom: fieldRef('metadata.name') },
                  ...r.pod.extraEnv,
                ],
                ports,
                livenessProbe: {
                  httpGet: { path: '/healthz', port: k8s.IntOrString.fromString('health') },
                  initialDelaySeconds: 5,
                  periodSeconds: 10,
                  timeoutSeconds: 2,
                  failureThreshold: 3,
                },
                readinessProbe: {
                  httpGet: { path: '/readyz', port: k8s.IntOrString.fromString('health') },
                  periodSeconds: 5,
                  timeoutSeconds: 2,
                  failureThreshold: 3,
                },
                resources: {
                  requests: quantities(r.resources.requests),
                  limits: quantities(r.resources.limits),
                },
                securityContext: {
                  allowPrivilegeEscalation: false,
                  readOnlyRootFilesystem: true,
                  runAsNonRoot: true,
                  runAsUser: 65532,
                  runAsGroup: 65532,
                  capabilities: { drop: ['ALL'] },
                  seccompProfile: { type: 'RuntimeDefault' },
                },
                // The root filesystem is read-only; give Node a small scratch /tmp.
                volumeMounts: [
                  { name: 'tmp', mountPath: '/tmp' },
                  ...(r.metrics.certSecret ? [{ name: 'metrics-cert', mountPath: METRICS_CERT_MOUNT, readOnly: true }] : []),
                ],
              },
            ],
            volumes: [
              { name: 'tmp', emptyDir: { sizeLimit: k8s.Quantity.fromString('16Mi') } },
              // Not a subPath mount: those never see the Secret's rotations.
              ...(r.metrics.certSecret ? [{ name: 'metrics-cert', secret: { secretName: r.metrics.certSecret } }] : []),
            ],
          },
        },
      },
    });

    if (r.metrics.enabled) {
      new k8s.KubeService(this, 'MetricsService', {
        metadata: meta(`${r.name}-metrics`, ns),
        spec: {
          type: 'ClusterIP',
          selector,
          ports: [
            {
              name: r.metrics.insecurePlainHttp ? 'http' : 'https',
              port: r.metrics.port,
              targetPort: k8s.IntOrString.fromString('metrics'),
              protocol: 'TCP',
            },
          ],
        },
      });
    }

    // Opt-in: prometheus-operator's ServiceMonitor of that Service, and the scraper's binding.
    addServiceMonitor(this, { config: r, labels, selector, metricsReaderRoleName: this.metricsReaderRoleName });

    if (r.metrics.enabled && r.metrics.networkPolicy.enabled) {
      // Selecting the pod isolates it for ingress: the metrics port is admitted from labelled
      // namespaces only, and the health port from no pod at all. The kubelet's probes still
      // arrive: NetworkPolicy always admits traffic from the pod's own node (the Kubernetes
      // documentation's exception to ipBlock rules), which is the only peer the probe port serves.
      new k8s.KubeNetworkPolicy(this, 'MetricsNetworkPolicy', {
        metadata: meta(`${r.name}-allow-metrics-traffic`, ns),
        spec: {
          podSelector: { matchLabels: selector },
          policyTypes: ['Ingress'],
          ingress: [
            {
              from: [{ namespaceSelector: { matchLabels: { ...r.metrics.networkPolicy.namespaceLabels } } }],
              ports: [{ port: k8s.IntOrString.fromNumber(r.metrics.port), protocol: 'TCP' }],
            },
          ],
        },
      });
    }

    if (r.ha.enabled) {
      // maxUnavailable 1 rather than minAvailable 1: a drain takes one replica at a time, so a
      // leader plus at least one warm standby stay up while there are 3 or more replicas, the
      // budget follows ha.replicas without edits, and it never blocks a drain outright (a
      // minAvailable 1 budget over 1 replica would). Unready pods are evictable regardless.
      new k8s.KubePodDisruptionBudget(this, 'PodDisruptionBudget', {
        metadata: meta(r.name, ns),
        spec: {
          maxUnavailable: k8s.IntOrString.fromNumber(1),
          selector: { matchLabels: selector },
          unhealthyPodEvictionPolicy: 'AlwaysAllow',
        },
      });
    }

    // Opt-in: the alerts as a PrometheusRule.
    addPrometheusRule(this, r, labels);

    // Opt-in: the Grafana dashboard as a ConfigMap for Grafana's sidecar.
    addDashboardConfigMap(this, r, labels);
  }
}

/** The pod spec fields of the pod props that are set (none by default: the default pod is unchanged). */
function podPlacement(r: ResolvedEchoperatorProps): Partial<k8s.PodSpec> {
  const p = r.pod;
  return {
    ...(Object.keys(p.nodeSelector).length ? { nodeSelector: p.nodeSelector } : {}),
    ...(p.tolerations.length ? { tolerations: p.tolerations } : {}),
    ...(p.affinity ? { affinity: p.affinity } : {}),
    ...(p.priorityClassName ? { priorityClassName: p.priorityClassName } : {}),
    ...(p.imagePullSecrets.length ? { imagePullSecrets: p.imagePullSecrets } : {}),
  };
}

function quantities(q: ResourceQuantities): Record<string, k8s.Quantity> {
  const out: Record<string, k8s.Quantity> = {};
  if (q.cpu !== undefined) out.cpu = k8s.Quantity.fromString(q.cpu);
  if (q.memory !== undefined) out.memory = k8s.Quantity.fromString(q.memory);
  return out;
}
