/**
 * The pod settings every Helm chart has, with Helm's names and shapes: where the operator's pods
 * may run (nodeSelector, tolerations, affinity, priorityClassName), how their image is pulled
 * (imagePullSecrets), what they carry (podAnnotations, podLabels) and extra environment
 * (extraEnv). Each goes on the Deployment's pod template only; the ServiceAccount, the RBAC and
 * the confinement policy (which binds the ServiceAccount, not the pod) are unaffected.
 *
 * Guarantees: checkPodProps throws EchoperatorPropsError naming the prop (and the entry) for any
 * value the API server would refuse or that would break the install: a pod label that would
 * change the Deployment's selector, an annotation that would replace the settings checksum, an
 * environment variable that would override one the install sets.
 */
import type * as k8s from './imports/k8s.js';
import { isDns1123Subdomain, isLabelKey, isLabelValue } from '../src/config/validation.js';

export interface EchoperatorPodProps {
  /**
   * Node labels a node must carry to run the operator (pod spec.nodeSelector).
   * @default - none: any node
   */
  readonly nodeSelector?: Record<string, string>;
  /**
   * Taints the operator's pods tolerate (pod spec.tolerations).
   * @default - none
   */
  readonly tolerations?: k8s.Toleration[];
  /**
   * Node affinity, pod affinity and pod anti-affinity (pod spec.affinity). With ha.enabled the
   * install already spreads replicas across nodes (topologySpreadConstraints); this adds to it.
   * @default - none
   */
  readonly affinity?: k8s.Affinity;
  /**
   * A PriorityClass for the operator's pods, e.g. one that keeps it scheduled under pressure.
   * @default - none: the cluster's default priority
   */
  readonly priorityClassName?: string;
  /**
   * Secrets (`kubernetes.io/dockerconfigjson`, in the operator's namespace) to pull the image from
   * a private registry, as Helm charts take them: a list of `{ name }`, put on the pod spec.
   * @default - none
   */
  readonly imagePullSecrets?: { name: string }[];
  /**
   * Extra annotations on the operator's pods (not on the Deployment). The install's settings
   * checksum annotation cannot be set here.
   * @default - none
   */
  readonly podAnnotations?: Record<string, string>;
  /**
   * Extra labels on the operator's pods (not on the Deployment, so its selector never changes).
   * The app.kubernetes.io labels the install sets cannot be overridden.
   * @default - none
   */
  readonly podLabels?: Record<string, string>;
  /**
   * Extra environment variables of the operator's container, e.g. a setting without a values key
   * (WORK_QUEUE_ORDER) or a proxy (HTTPS_PROXY, NO_PROXY). Names the install sets itself are
   * refused (see {@link installEnvNames}): `env` overrides `envFrom`, so an entry named like a key
   * of the settings ConfigMap would silently replace a validated setting and escape the settings
   * checksum, and POD_NAME, NAMESPACE... come from the downward API (leader election's identity).
   * @default - none
   */
  readonly extraEnv?: k8s.EnvVar[];
}

/** The pod props with defaults filled in (empty lists and maps). */
export interface ResolvedEchoperatorPodProps {
  nodeSelector: Record<string, string>;
  tolerations: k8s.Toleration[];
  affinity: k8s.Affinity | undefined;
  priorityClassName: string | undefined;
  imagePullSecrets: { name: string }[];
  podAnnotations: Record<string, string>;
  podLabels: Record<string, string>;
  extraEnv: k8s.EnvVar[];
}

export function resolvePodProps(props: EchoperatorPodProps): ResolvedEchoperatorPodProps {
  return {
    nodeSelector: { ...props.nodeSelector },
    tolerations: [...(props.tolerations ?? [])],
    affinity: props.affinity,
    priorityClassName: props.priorityClassName,
    imagePullSecrets: [...(props.imagePullSecrets ?? [])],
    podAnnotations: { ...props.podAnnotations },
    podLabels: { ...props.podLabels },
    extraEnv: [...(props.extraEnv ?? [])],
  };
}

/** The environment variables the install sets in the operator's container from the downward API. */
export const POD_ENV_NAMES = ['POD_NAME', 'POD_NAMESPACE', 'NAMESPACE', 'HA_NODE_ID'] as const;

/** What the rules below need from the rest of the props. */
export interface PodPropsContext {
  /** Every name the install sets in the container's environment (pod env and settings ConfigMap). */
  installEnvNames: ReadonlySet<string>;
  /** Every label the install puts on the pod template itself. */
  installLabelKeys: ReadonlySet<string>;
  /** The pod template annotation the install sets itself. */
  checksumAnnotation: string;
  fail: (message: string) => never;
}

const TOLERATION_OPERATORS = ['Exists', 'Equal'];
const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];
/** The classic environment variable name rule, which every supported Kubernetes accepts. */
const ENV_NAME = /^[-._a-zA-Z][-._a-zA-Z0-9]*$/;

/** Throws (through ctx.fail) naming the first prop that is wrong; see the module's guarantees. */
export function checkPodProps(p: ResolvedEchoperatorPodProps, ctx: PodPropsContext): void {
  const { fail } = ctx;
  const q = JSON.stringify;
  const checkLabels = (what: string, labels: Record<string, string>): void => {
    for (const [k, v] of Object.entries(labels)) {
      if (!isLabelKey(k)) fail(`${what} key ${q(k)} must be a label key ([prefix/]name, name at most 63 characters)`);
      if (typeof v !== 'string' || !isLabelValue(v)) {
        fail(`${what}[${q(k)}] must be a label value (at most 63 letters, digits, '-', '_' or '.'), got ${q(v)}`);
      }
    }
  };

  checkLabels('nodeSelector', p.nodeSelector);

  p.tolerations.forEach((t, i) => {
    const at = `tolerations[${i}]`;
    const operator = t.operator ?? 'Equal';
    if (!TOLERATION_OPERATORS.includes(operator)) fail(`${at}.operator must be Exists or Equal, got ${q(t.operator)}`);
    if (t.key !== undefined && t.key !== '' && !isLabelKey(t.key)) fail(`${at}.key must be a label key, got ${q(t.key)}`);
    if ((t.key ?? '') === '' && operator !== 'Exists')
      fail(`${at}.operator must be Exists when key is empty (it then tolerates every taint)`);
    if (operator === 'Exists' && (t.value ?? '') !== '') fail(`${at}.value must be empty when operator is Exists, got ${q(t.value)}`);
    if (operator === 'Equal' && !isLabelValue(t.value ?? '')) fail(`${at}.value must be a label value, got ${q(t.value)}`);
    if (t.effect !== undefined && t.effect !== '' && !TAINT_EFFECTS.includes(t.effect)) {
      fail(`${at}.effect must be one of ${TAINT_EFFECTS.join(', ')} (or empty: every effect), got ${q(t.effect)}`);
    }
    if (t.tolerationSeconds !== undefined) {
      if (!Number.isInteger(t.tolerationSeconds)) fail(`${at}.tolerationSeconds must be an integer, got ${q(t.tolerationSeconds)}`);
      if (t.effect !== 'NoExecute') fail(`${at}.tolerationSeconds applies only with effect NoExecute, got effect ${q(t.effect)}`);
    }
  });

  if (p.affinity !== undefined) checkAffinity(p.affinity, fail);

  if (p.priorityClassName !== undefined && !isDns1123Subdomain(p.priorityClassName)) {
    fail(`priorityClassName must be a PriorityClass name (a DNS subdomain), got ${q(p.priorityClassName)}`);
  }

  const secrets = new Set<string>();
  p.imagePullSecrets.forEach((s, i) => {
    if (typeof s?.name !== 'string' || !isDns1123Subdomain(s.name)) {
      fail(`imagePullSecrets[${i}].name must be a Secret name (a DNS subdomain), got ${q(s?.name)}`);
    }
    if (secrets.has(s.name)) fail(`imagePullSecrets lists ${s.name} twice`);
    secrets.add(s.name);
  });

  for (const [k, v] of Object.entries(p.podAnnotations)) {
    if (!isLabelKey(k)) fail(`podAnnotations key ${q(k)} must be an annotation key ([prefix/]name, name at most 63 characters)`);
    if (typeof v !== 'string') fail(`podAnnotations[${q(k)}] must be a string, got ${q(v)}`);
    if (k === ctx.checksumAnnotation)
      fail(`podAnnotations must not set ${k}: the install sets it to the settings' checksum, which rolls the pods when a setting changes`);
  }

  checkLabels('podLabels', p.podLabels);
  for (const k of Object.keys(p.podLabels)) {
    if (ctx.installLabelKeys.has(k)) {
      fail(
        `podLabels must not set ${k}: the install sets it (app.kubernetes.io/name and /instance select the operator's pods ` +
          'for the Deployment, Service, PodDisruptionBudget and NetworkPolicy)',
      );
    }
  }

  const names = new Set<string>();
  p.extraEnv.forEach((e, i) => {
    const at = `extraEnv[${i}]`;
    if (typeof e?.name !== 'string' || !ENV_NAME.test(e.name)) {
      fail(
        `${at}.name must be an environment variable name (letters, digits, '_', '-', '.'; not starting with a digit), got ${q(e?.name)}`,
      );
    }
    if ((POD_ENV_NAMES as readonly string[]).includes(e.name)) {
      fail(`${at}.name ${e.name} is set by the install itself, from the downward API: the pod's identity, which leader election uses`);
    }
    if (ctx.installEnvNames.has(e.name)) {
      fail(
        `${at}.name ${e.name} is set by the install itself, in the settings ConfigMap: env overrides envFrom, so it would ` +
          'silently replace the validated setting and escape the settings checksum; set it through its values key',
      );
    }
    if (names.has(e.name)) fail(`extraEnv sets ${e.name} twice`);
    names.add(e.name);
    if (e.value !== undefined && e.valueFrom !== undefined) fail(`${at} must set value or valueFrom, not both`);
    if (e.valueFrom !== undefined) {
      const sources = Object.entries(e.valueFrom).filter(([, v]) => v !== undefined);
      if (sources.length !== 1) {
        fail(`${at}.valueFrom must set exactly one of fieldRef, resourceFieldRef, configMapKeyRef, secretKeyRef, got ${sources.length}`);
      }
    }
  });
}

function checkAffinity(a: k8s.Affinity, fail: (message: string) => never): void {
  const weight = (at: string, w: number): void => {
    if (!Number.isInteger(w) || w < 1 || w > 100) fail(`${at}.weight must be an integer from 1 to 100, got ${JSON.stringify(w)}`);
  };
  a.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.forEach((t, i) =>
    weight(`affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[${i}]`, t.weight),
  );
  for (const kind of ['podAffinity', 'podAntiAffinity'] as const) {
    const terms = a[kind];
    const topology = (at: string, key: string): void => {
      if (typeof key !== 'string' || key === '') fail(`${at}.topologyKey must be set, e.g. kubernetes.io/hostname`);
    };
    terms?.requiredDuringSchedulingIgnoredDuringExecution?.forEach((t, i) =>
      topology(`affinity.${kind}.requiredDuringSchedulingIgnoredDuringExecution[${i}]`, t.topologyKey),
    );
    terms?.preferredDuringSchedulingIgnoredDuringExecution?.forEach((t, i) => {
      const at = `affinity.${kind}.preferredDuringSchedulingIgnoredDuringExecution[${i}]`;
      weight(at, t.weight);
      topology(`${at}.podAffinityTerm`, t.podAffinityTerm?.topologyKey);
    });
  }
}
