/**
 * The one schema of infra/values.yaml: it validates the file (parseValues), gives its TypeScript
 * type (Values, checked against EchoperatorProps in values.ts) and, through valuesJsonSchema(),
 * the committed infra/values.schema.json (Helm's file name) that editors (yaml-language-server)
 * and CI tools read; `npm run gen:values-schema` writes it, and a unit test checks it is current.
 *
 * Library: zod 4 (pinned exactly). Chosen over TypeBox and valibot because one declaration gives
 * all three outputs with no second package: z.infer for the type, z.toJSONSchema (built in since
 * 4.0, with a draft-07 target, the draft Helm 3's validator and editors read) for the file, and
 * parse issues carrying the exact path and the expected type, from which values.ts writes errors
 * naming the key; `.transform` turns a YAML quantity string into cdk8s's Quantity while the JSON
 * Schema still describes the string the user writes (io: 'input'). TypeBox's schemas are JSON
 * Schema natively but its errors are generic and its transforms a separate codec layer; valibot
 * needs a second package for JSON Schema. zod is a build-time dependency of infra/ only: the
 * operator's bundle never imports it.
 *
 * What the schema holds: shapes, types, enums, unknown keys (refused at every level), ranges and
 * formats (ports, counts, DNS names, label keys, image references, quantities), so that
 * values.schema.json refuses a bad value in an editor or `helm lint` as the synth does. What it
 * leaves to the construct (resolveEchoperatorProps, which checks construct users' props too):
 * the rules across values (ports differ, lease timings), save two that draft-07 can say and the
 * Go chart's values.yaml needs: a ServiceMonitor needs a certificate it can verify, and
 * monitoring.port/path (the Go chart's names) hold the default unless metrics.* is set.
 * A key left empty in YAML (`image:`) means "the default", as with every other key.
 *
 * The Kubernetes structures (affinity, tolerations, extraEnv) hold exactly the fields of
 * the typed API the install is made with (infra/imports, Kubernetes 1.31), which the synthesis
 * would otherwise drop silently.
 */
import { fileURLToPath } from 'node:url';
import * as k8s from './imports/k8s.js';
import { format, resolveConfig } from 'prettier';
import { z } from 'zod';
import { IMAGE_PARTS, IMAGE_REFERENCE, PATTERNS, URL_PATH } from '../src/config/validation.js';
import { LEASE_MAX_SECONDS } from '../src/runtime/leaderelection/config.js';
import {
  DEFAULTS,
  ECHOPERATOR_VERSION,
  IMAGE_REPOSITORY,
  NAME_MAX_LENGTH,
  OPERATOR_SHUTDOWN_TIMEOUT_SECONDS,
  PROMETHEUS_DURATION,
  QUANTITY,
  RUNBOOK_URL,
} from './props.js';

/** An optional values key: absent or empty (null in YAML) both mean the default. */
function opt<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((v) => (v === null ? undefined : v) as Exclude<z.output<T>, null>);
}

const int = () => z.int();
const stringMap = () => z.record(z.string(), z.string());
// The formats the construct checks (infra/props.ts), said here too so that values.schema.json
// refuses what the synth refuses: an editor or `helm lint` flags the value before any synth.
const positive = () => z.int().min(1, { error: 'must be an integer of at least 1' });
const port = () => z.int().min(1, { error: 'must be a port, 1-65535' }).max(65_535, { error: 'must be a port, 1-65535' });
const dnsLabel = (max = 63) =>
  z
    .string()
    .max(max, { error: `must be at most ${max} characters` })
    .regex(PATTERNS.dns1123Label, { error: "must be a DNS label: lower-case letters, digits and '-'" });
/** A DNS label, or "" for "not set" (Helm charts' nameOverride: "" convention). */
const dnsLabelOrEmpty = (max: number) =>
  z
    .string()
    .max(max, { error: `must be at most ${max} characters` })
    .regex(new RegExp(`^$|${PATTERNS.dns1123Label.source}`), { error: "must be empty or a DNS label: lower-case letters, digits and '-'" });
const dnsSubdomain = () =>
  z
    .string()
    .max(253, { error: 'must be at most 253 characters' })
    .regex(PATTERNS.dns1123Subdomain, { error: "must be a DNS subdomain: lower-case letters, digits, '-' and '.'" });
const urlPath = () => z.string().regex(URL_PATH, { error: "must be an absolute URL path such as '/metrics'" });
const imageReference = () => z.string().regex(IMAGE_REFERENCE, { error: "must be an image reference such as 'repo/name:tag'" });
const labels = () =>
  z.record(
    z.string().regex(PATTERNS.labelKey, { error: 'must be a label key' }),
    z.string().max(63).regex(PATTERNS.labelValue, { error: 'must be a label value' }),
  );
const leaseSeconds = () => positive().max(LEASE_MAX_SECONDS, { error: `must be at most ${LEASE_MAX_SECONDS} (an hour)` });

const labelSelectorRequirement = z.strictObject({
  key: z.string(),
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
  values: z.array(z.string()).optional(),
});
// Named structures appear once, under definitions, as in Kubernetes' own OpenAPI.
const labelSelector = z
  .strictObject({
    matchLabels: stringMap().optional(),
    matchExpressions: z.array(labelSelectorRequirement).optional(),
  })
  .meta({ id: 'LabelSelector' });
const nodeSelectorRequirement = z.strictObject({
  key: z.string(),
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']),
  values: z.array(z.string()).optional(),
});
const nodeSelectorTerm = z
  .strictObject({
    matchExpressions: z.array(nodeSelectorRequirement).optional(),
    matchFields: z.array(nodeSelectorRequirement).optional(),
  })
  .meta({ id: 'NodeSelectorTerm' });
const podAffinityTerm = z
  .strictObject({
    labelSelector: labelSelector.optional(),
    namespaceSelector: labelSelector.optional(),
    namespaces: z.array(z.string()).optional(),
    topologyKey: z.string(),
  })
  .meta({ id: 'PodAffinityTerm' });
const podAffinity = z
  .strictObject({
    requiredDuringSchedulingIgnoredDuringExecution: z.array(podAffinityTerm).optional(),
    preferredDuringSchedulingIgnoredDuringExecution: z.array(z.strictObject({ weight: int(), podAffinityTerm })).optional(),
  })
  .meta({ id: 'PodAffinity' });
const affinity = z
  .strictObject({
    nodeAffinity: z
      .strictObject({
        requiredDuringSchedulingIgnoredDuringExecution: z.strictObject({ nodeSelectorTerms: z.array(nodeSelectorTerm) }).optional(),
        preferredDuringSchedulingIgnoredDuringExecution: z
          .array(z.strictObject({ weight: int(), preference: nodeSelectorTerm }))
          .optional(),
      })
      .optional(),
    podAffinity: podAffinity.optional(),
    podAntiAffinity: podAffinity.optional(),
  })
  .meta({ description: "The pods' affinity (pod spec.affinity): nodeAffinity, podAffinity, podAntiAffinity." });

const toleration = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(['Exists', 'Equal']).optional(),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
  tolerationSeconds: int().optional(),
});

const keySelector = z.strictObject({ name: z.string().optional(), key: z.string(), optional: z.boolean().optional() });
const envVar = z.strictObject({
  name: z.string(),
  value: z.string().optional(),
  valueFrom: z
    .strictObject({
      fieldRef: z.strictObject({ apiVersion: z.string().optional(), fieldPath: z.string() }).optional(),
      resourceFieldRef: z
        .strictObject({
          containerName: z.string().optional(),
          resource: z.string(),
          divisor: z
            .string()
            .transform((q) => k8s.Quantity.fromString(q))
            .optional(),
        })
        .optional(),
      configMapKeyRef: keySelector.optional(),
      secretKeyRef: keySelector.optional(),
    })
    .optional(),
});

/** A Kubernetes quantity the construct can compare ('100m', '1', '64Mi'): checked here, so an editor flags it too. */
const quantity = () => z.string().regex(QUANTITY, { error: "must be a Kubernetes quantity such as '100m', '1', '64Mi' or '1Gi'" });
const quantities = z.strictObject({ cpu: opt(quantity()), memory: opt(quantity()) });

/** The operator's image, in Helm's (and the Go chart's) shape; infra/values.ts joins it into one reference. */
const image = z
  .strictObject({
    repository: opt(
      z
        .string()
        .regex(IMAGE_PARTS.repository, { error: "must be an image repository such as 'ghcr.io/org/name' (no tag or digest)" })
        .meta({ description: 'The image repository, without tag or digest.', default: IMAGE_REPOSITORY }),
    ),
    tag: opt(
      z
        .string()
        .regex(new RegExp(`^$|${IMAGE_PARTS.tag.source}`), { error: "must be an image tag such as '0.1.0'" })
        .meta({
          description: "The image tag; empty means the default (the chart's version). Ignored when digest is set.",
          default: ECHOPERATOR_VERSION,
        }),
    ),
    digest: opt(
      z
        .string()
        .regex(new RegExp(`^$|${IMAGE_PARTS.digest.source}`), { error: "must be empty or a digest such as 'sha256:<64 hex digits>'" })
        .meta({ description: 'The image digest; when set the reference is repository@digest and tag is ignored.', default: '' }),
    ),
    pullPolicy: opt(
      z
        .enum(['Always', 'IfNotPresent', 'Never'])
        .meta({ description: "The container's imagePullPolicy.", default: DEFAULTS.imagePullPolicy }),
    ),
  })
  .meta({ description: 'The operator image: repository, tag or digest, pullPolicy (a string is refused: image is a map).' });

/** Leader election timings and Lease, under ha.leaderElection as in the Go chart. */
const leaderElection = z
  .strictObject({
    leaseDurationSeconds: opt(
      leaseSeconds().meta({
        description: 'How long a standby waits on an unchanged Lease before taking it over; more than renewDeadlineSeconds.',
        default: DEFAULTS.ha.leaseDurationSeconds,
      }),
    ),
    renewDeadlineSeconds: opt(
      leaseSeconds().meta({
        description: 'How long a leader keeps leading without a successful renewal; more than 1.2 x retryPeriodSeconds.',
        default: DEFAULTS.ha.renewDeadlineSeconds,
      }),
    ),
    retryPeriodSeconds: opt(
      leaseSeconds().meta({
        description: 'Pause between attempts to acquire or renew the Lease.',
        default: DEFAULTS.ha.retryPeriodSeconds,
      }),
    ),
    leaseName: opt(dnsSubdomain().meta({ description: "The Lease's name, in the operator's namespace.", default: DEFAULTS.ha.leaseName })),
  })
  .meta({ description: 'Leader election through a coordination.k8s.io Lease (with ha.enabled).' });

export const VALUES_SCHEMA = z
  .strictObject({
    namespace: opt(dnsLabel()),
    createNamespace: opt(z.boolean()),
    installCrds: opt(z.boolean()),
    nameOverride: opt(
      dnsLabelOrEmpty(63).meta({
        description: "The app.kubernetes.io/name label, and part of the objects' names (Helm's nameOverride); empty: echoperator.",
        default: '',
      }),
    ),
    // Leaves room for the '-config' and '-metrics' suffixes within a DNS label.
    fullnameOverride: opt(
      dnsLabelOrEmpty(NAME_MAX_LENGTH).meta({
        description:
          "The objects' name (Helm's fullnameOverride); empty: the release name, followed by -<name> unless it contains the name.",
        default: '',
      }),
    ),
    image: opt(image),
    command: opt(z.array(z.string()).min(1, { error: 'must not be empty' })),
    args: opt(z.array(z.string())),
    numWorkers: opt(positive().meta({ description: 'Concurrent reconcile workers (NUM_WORKERS).', default: DEFAULTS.workers })),
    watchNamespaces: opt(z.array(dnsLabel()).min(1, { error: 'must list at least one namespace; leave it out to watch all' })),
    logLevel: opt(z.enum(['debug', 'info', 'warn', 'error'])),
    env: opt(
      z.string().meta({
        description: "The Go chart's environment: local logs text (LOG_FORMAT=text), anything else JSON lines.",
        default: 'production',
      }),
    ),
    metrics: opt(
      z.strictObject({
        enabled: opt(z.boolean()),
        port: opt(port()),
        path: opt(urlPath()),
        insecurePlainHttp: opt(z.boolean()),
        certSecret: opt(dnsSubdomain()),
        networkPolicy: opt(z.strictObject({ enabled: opt(z.boolean()), namespaceLabels: opt(labels()) })),
      }),
    ),
    monitoring: opt(
      z.strictObject({
        enabled: opt(z.boolean()),
        namespace: opt(dnsLabel()),
        interval: opt(z.string().regex(PROMETHEUS_DURATION, { error: "must be a Prometheus duration such as '30s' or '1m'" })),
        labels: opt(labels()),
        path: opt(urlPath().meta({ description: "The Go chart's name for metrics.path: accepted only when equal to it." })),
        port: opt(port().meta({ description: "The Go chart's name for metrics.port: accepted only when equal to it." })),
        prometheusServiceAccount: opt(z.strictObject({ name: dnsSubdomain(), namespace: dnsLabel() })),
        insecureSkipVerify: opt(z.boolean()),
        rules: opt(
          z.strictObject({
            enabled: opt(z.boolean()),
            labels: opt(labels()),
            runbookUrl: opt(z.string().regex(RUNBOOK_URL, { error: 'must be an http(s) URL without a fragment' })),
          }),
        ),
        dashboard: opt(z.strictObject({ enabled: opt(z.boolean()), namespace: opt(dnsLabel()), labels: opt(labels()) })),
      }),
    ),
    healthPort: opt(port()),
    resources: opt(z.strictObject({ requests: opt(quantities), limits: opt(quantities) })),
    jobImage: opt(imageReference()),
    jobMaxResources: opt(
      z.strictObject({ cpu: opt(quantity()), memory: opt(quantity()) }).meta({
        description:
          "The most cpu and memory each container of the operator's Jobs and CronJobs may request or be limited to " +
          '(the confinement policy enforces it); default {cpu: 100m, memory: 64Mi}.',
      }),
    ),
    ha: opt(
      z.strictObject({
        enabled: opt(z.boolean()),
        replicaCount: opt(positive().meta({ description: 'Replicas when ha.enabled (one otherwise).', default: DEFAULTS.ha.replicas })),
        leaderElection: opt(leaderElection),
      }),
    ),
    terminationGracePeriodSeconds: opt(
      z.int().min(OPERATOR_SHUTDOWN_TIMEOUT_SECONDS + 1, {
        error: `must be greater than the operator's ${OPERATOR_SHUTDOWN_TIMEOUT_SECONDS} s shutdown timeout`,
      }),
    ),
    confineServiceAccount: opt(z.boolean()),
    tenantRoles: opt(z.boolean()),
    nodeSelector: opt(labels().meta({ description: 'Node labels the operator needs (pod spec.nodeSelector).' })),
    tolerations: opt(z.array(toleration).meta({ description: 'Taints the operator tolerates (pod spec.tolerations).' })),
    affinity: opt(affinity),
    priorityClassName: opt(dnsSubdomain().meta({ description: "The pods' PriorityClass (pod spec.priorityClassName)." })),
    imagePullSecrets: opt(
      z
        .array(z.strictObject({ name: dnsSubdomain() }))
        .meta({ description: 'Secrets to pull the image with (pod spec.imagePullSecrets).' }),
    ),
    podAnnotations: opt(stringMap().meta({ description: "Extra annotations on the operator's pods." })),
    podLabels: opt(labels().meta({ description: "Extra labels on the operator's pods (not the install's app.kubernetes.io ones)." })),
    extraEnv: opt(
      z.array(envVar).meta({ description: "Extra environment variables of the operator's container (not the ones the install sets)." }),
    ),
  })
  .meta({
    title: 'echoperator install values',
    description: 'infra/values.yaml: the settings `npm run synth` turns into the install (infra/props.ts documents each default).',
  });

/** What parseValues returns for a valid values file. */
export type Values = z.output<typeof VALUES_SCHEMA>;

/**
 * monitoring.port and monitoring.path (the Go chart's names) must equal metrics.port and
 * metrics.path. Draft-07 cannot compare two values of a document, so the JSON Schema says what it
 * can: without metrics.port (or metrics.path) set, the Go chart's key must hold the default.
 * infra/values.ts checks the equality itself, as the Helm chart's templates do.
 */
function goChartAliasRules(): Record<string, unknown>[] {
  const aliases = [
    ['port', { type: 'integer' }, DEFAULTS.metrics.port],
    ['path', { type: 'string' }, DEFAULTS.metrics.path],
  ] as const;
  return aliases.map(([key, type, value]) => ({
    if: { not: { required: ['metrics'], properties: { metrics: { type: 'object', required: [key], properties: { [key]: type } } } } },
    then: { properties: { monitoring: { properties: { [key]: { anyOf: [{ const: value }, { type: 'null' }] } } } } },
  }));
}

/**
 * A ServiceMonitor needs a certificate it can verify: monitoring.enabled without metrics.certSecret
 * (or plain HTTP) only with monitoring.insecureSkipVerify: true, as the construct refuses it (the
 * Go chart's values.yaml sets monitoring.enabled and neither way out).
 */
function verifiableScrapeRule(): Record<string, unknown> {
  // `parent.key` is present and matches `schema`.
  const set = (parent: string, key: string, schema: Record<string, unknown>) => ({
    required: [parent],
    properties: { [parent]: { type: 'object', required: [key], properties: { [key]: schema } } },
  });
  return {
    if: {
      allOf: [
        set('monitoring', 'enabled', { const: true }),
        { not: set('metrics', 'certSecret', { type: 'string' }) },
        { not: set('metrics', 'insecurePlainHttp', { const: true }) },
      ],
    },
    then: set('monitoring', 'insecureSkipVerify', { const: true }),
  };
}

/** The JSON Schema (draft-07) of the values file, as committed in infra/values.schema.json. */
export function valuesJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(VALUES_SCHEMA, {
    target: 'draft-7',
    io: 'input',
    unrepresentable: 'throw',
    override: ({ jsonSchema }) => {
      // z.int()'s safe-integer bounds say nothing a reader needs.
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
    },
  });
  return { ...schema, allOf: [...goChartAliasRules(), verifiableScrapeRule()] };
}

/** Where the JSON Schema is committed: beside values.yaml, under Helm's name for it. */
export const VALUES_SCHEMA_FILE = new URL('./values.schema.json', import.meta.url);

/** The exact text of infra/values.schema.json: formatted by the repository's prettier, as every file is. */
export async function valuesJsonSchemaText(): Promise<string> {
  const filepath = fileURLToPath(VALUES_SCHEMA_FILE);
  return format(JSON.stringify(valuesJsonSchema()), { ...(await resolveConfig(filepath)), parser: 'json', filepath });
}
