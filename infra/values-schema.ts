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
 * Every key carries a description (what it does, what it accepts; the meaning is infra/props.ts's)
 * and, where the synth's default is a constant, that default, taken from resolveEchoperatorProps()
 * with no props (SYNTH below), so values.schema.json and the README's table cannot drift from it.
 * A key whose default depends on another value or means "none" has no `default`; its description
 * says "Unset: ...". test/unit/values.test.ts checks both: every key described, and a values file
 * that writes every default resolves to exactly what an empty one does.
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
  resolveEchoperatorProps,
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
  .meta({
    description:
      "The pods' affinity (pod spec.affinity): nodeAffinity, podAffinity, podAntiAffinity. Unset: none (ha.enabled spreads replicas across nodes anyway).",
  });

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

/**
 * What the construct synthesizes with no props: the source of every `default` below, so that the
 * schema's defaults are the synth's by construction and a default changed in infra/props.ts
 * changes values.schema.json (and the README's table) at the next `npm run gen:values-schema`.
 */
const SYNTH = resolveEchoperatorProps();

/**
 * `schema` with its description and its default. The default is given when the synth's is a
 * constant; a key whose default depends on another value or means "none" (watchNamespaces,
 * monitoring.namespace...) has none, and its description says what unset means ("Unset: ...").
 */
function documented<T extends z.ZodType>(schema: T, description: string, dflt?: unknown): T {
  return schema.meta(dflt === undefined ? { description } : { description, default: dflt });
}

/** A Kubernetes quantity the construct can compare ('100m', '1', '64Mi'): checked here, so an editor flags it too. */
const quantity = () => z.string().regex(QUANTITY, { error: "must be a Kubernetes quantity such as '100m', '1', '64Mi' or '1Gi'" });

/** The operator's image, in Helm's (and the Go chart's) shape; infra/values.ts joins it into one reference. */
const image = z
  .strictObject({
    repository: opt(
      documented(
        z.string().regex(IMAGE_PARTS.repository, { error: "must be an image repository such as 'ghcr.io/org/name' (no tag or digest)" }),
        'The image repository, without tag or digest.',
        IMAGE_REPOSITORY,
      ),
    ),
    tag: opt(
      documented(
        z.string().regex(new RegExp(`^$|${IMAGE_PARTS.tag.source}`), { error: "must be an image tag such as '0.1.0'" }),
        "The image tag; empty means the default (this version, the chart's appVersion). Ignored when digest is set.",
        ECHOPERATOR_VERSION,
      ),
    ),
    digest: opt(
      documented(
        z
          .string()
          .regex(new RegExp(`^$|${IMAGE_PARTS.digest.source}`), { error: "must be empty or a digest such as 'sha256:<64 hex digits>'" }),
        'The image digest; when set the reference is repository@digest and tag is ignored.',
        '',
      ),
    ),
    pullPolicy: opt(documented(z.enum(['Always', 'IfNotPresent', 'Never']), "The container's imagePullPolicy.", SYNTH.imagePullPolicy)),
  })
  .meta({ description: 'The operator image: repository, tag or digest, pullPolicy (a string is refused: image is a map).' });

/** Leader election timings and Lease, under ha.leaderElection as in the Go chart. */
const leaderElection = z
  .strictObject({
    leaseDurationSeconds: opt(
      documented(
        leaseSeconds(),
        'How long a standby waits on an unchanged Lease before taking it over; more than renewDeadlineSeconds.',
        SYNTH.ha.leaseDurationSeconds,
      ),
    ),
    renewDeadlineSeconds: opt(
      documented(
        leaseSeconds(),
        'How long a leader keeps leading without a successful renewal; more than 1.2 x retryPeriodSeconds.',
        SYNTH.ha.renewDeadlineSeconds,
      ),
    ),
    retryPeriodSeconds: opt(
      documented(leaseSeconds(), 'Pause between attempts to acquire or renew the Lease.', SYNTH.ha.retryPeriodSeconds),
    ),
    leaseName: opt(
      documented(
        dnsSubdomain(),
        "The Lease's name, in the operator's namespace; the RBAC grants access to this one only.",
        SYNTH.ha.leaseName,
      ),
    ),
  })
  .meta({ description: 'Leader election through a coordination.k8s.io Lease (with ha.enabled).' });

const metrics = z
  .strictObject({
    enabled: opt(
      documented(
        z.boolean(),
        'Serve metrics, with a Service in front of them (port https, or http with insecurePlainHttp).',
        SYNTH.metrics.enabled,
      ),
    ),
    port: opt(documented(port(), 'Port the metrics endpoint listens on; must differ from healthPort.', SYNTH.metrics.port)),
    path: opt(documented(urlPath(), 'HTTP path of the metrics endpoint.', SYNTH.metrics.path)),
    insecurePlainHttp: opt(
      documented(
        z.boolean(),
        'Plain HTTP and no authentication (METRICS_INSECURE_PLAIN_HTTP): anyone who reaches the port reads the metrics. ' +
          'For a trusted network only.',
        SYNTH.metrics.insecurePlainHttp,
      ),
    ),
    certSecret: opt(
      documented(
        dnsSubdomain(),
        "A kubernetes.io/tls Secret in the operator's namespace (e.g. cert-manager's) whose tls.crt and tls.key the endpoint " +
          'serves, reloaded when it rotates. Unset: a self-signed certificate made at start.',
      ),
    ),
    networkPolicy: opt(
      z
        .strictObject({
          enabled: opt(documented(z.boolean(), 'Create the NetworkPolicy.', SYNTH.metrics.networkPolicy.enabled)),
          namespaceLabels: opt(
            documented(
              labels(),
              'Labels a namespace must carry for its pods to reach the metrics port; at least one.',
              SYNTH.metrics.networkPolicy.namespaceLabels,
            ),
          ),
        })
        .meta({
          description:
            "An opt-in NetworkPolicy for the operator's pods: the metrics port only from namespaces with namespaceLabels, " +
            'the health port from anywhere. Only a CNI that enforces NetworkPolicies applies it.',
        }),
    ),
  })
  .meta({
    description:
      "The Prometheus metrics endpoint, served over HTTPS to callers whose token may get its path (bind scrapers to the '<name>-metrics-reader' ClusterRole).",
  });

const monitoring = z
  .strictObject({
    enabled: opt(
      documented(
        z.boolean(),
        "Create a ServiceMonitor (needs prometheus-operator's CRDs) that scrapes with the scraper's token, and bind " +
          'prometheusServiceAccount to the metrics-reader ClusterRole.',
        SYNTH.monitoring.enabled,
      ),
    ),
    namespace: opt(
      documented(
        dnsLabel(),
        "Namespace of the ServiceMonitor and the PrometheusRule; the install's own with metrics.certSecret. Unset: the install's namespace.",
      ),
    ),
    interval: opt(
      documented(
        z.string().regex(PROMETHEUS_DURATION, { error: "must be a Prometheus duration such as '30s' or '1m'" }),
        "Scrape interval, a Prometheus duration such as '30s' or '1m'.",
        SYNTH.monitoring.interval,
      ),
    ),
    labels: opt(
      documented(
        labels(),
        "Extra labels on the ServiceMonitor and the PrometheusRule, for a Prometheus' serviceMonitorSelector.",
        SYNTH.monitoring.labels,
      ),
    ),
    path: opt(documented(urlPath(), "The Go chart's name for metrics.path: accepted only when equal to it. Unset: metrics.path.")),
    port: opt(documented(port(), "The Go chart's name for metrics.port: accepted only when equal to it. Unset: metrics.port.")),
    prometheusServiceAccount: opt(
      documented(
        z.strictObject({ name: dnsSubdomain(), namespace: dnsLabel() }),
        'The ServiceAccount Prometheus scrapes with ({name, namespace}, both), bound to the metrics-reader ClusterRole.',
        SYNTH.monitoring.prometheusServiceAccount,
      ),
    ),
    insecureSkipVerify: opt(
      documented(
        z.boolean(),
        'Scrape without verifying the serving certificate: needed with enabled unless metrics.certSecret is set, as the ' +
          "self-signed certificate cannot be verified (the scraper's token goes to whichever endpoint answers).",
        SYNTH.monitoring.insecureSkipVerify,
      ),
    ),
    rules: opt(
      z
        .strictObject({
          enabled: opt(documented(z.boolean(), 'Create the PrometheusRule; needs metrics.enabled.', SYNTH.monitoring.rules.enabled)),
          labels: opt(
            documented(
              labels(),
              "Labels on the PrometheusRule, for a Prometheus' ruleSelector (kube-prometheus-stack's wants release: <name>). " +
                'Unset: monitoring.labels.',
            ),
          ),
          runbookUrl: opt(
            documented(
              z.string().regex(RUNBOOK_URL, { error: 'must be an http(s) URL without a fragment' }),
              "Where the runbooks are, an http(s) URL without a fragment: each alert's runbook_url is it plus #<alert name, lower-cased>.",
              SYNTH.monitoring.rules.runbookUrl,
            ),
          ),
        })
        .meta({ description: "An opt-in PrometheusRule: the operator's alerts, each with a runbook_url into docs/runbooks.md." }),
    ),
    dashboard: opt(
      z
        .strictObject({
          enabled: opt(documented(z.boolean(), "Create the dashboard's ConfigMap.", SYNTH.monitoring.dashboard.enabled)),
          namespace: opt(
            documented(dnsLabel(), "Namespace of the ConfigMap (the sidecar may watch only Grafana's). Unset: monitoring.namespace."),
          ),
          labels: opt(
            documented(
              labels(),
              "Labels Grafana's sidecar selects dashboards by; at least one when enabled.",
              SYNTH.monitoring.dashboard.labels,
            ),
          ),
        })
        .meta({
          description:
            "An opt-in Grafana dashboard: a ConfigMap holding its JSON, labelled for Grafana's dashboard sidecar (kube-prometheus-stack's).",
        }),
    ),
  })
  .meta({
    description:
      "Monitoring by prometheus-operator, with the Go chart's monitoring.* names: a ServiceMonitor over HTTPS, opt-in alerts and dashboard.",
  });

const resources = z
  .strictObject({
    requests: opt(
      z
        .strictObject({
          cpu: opt(documented(quantity(), "The operator container's CPU request, a Kubernetes quantity.", SYNTH.resources.requests.cpu)),
          memory: opt(
            documented(
              quantity(),
              "The operator container's memory request: covers the resident set measured with 10,000 Echos and their Jobs (docs/benchmarks.md).",
              SYNTH.resources.requests.memory,
            ),
          ),
        })
        .meta({ description: "The operator container's requests (both cpu and memory); each quantity given replaces its default only." }),
    ),
    limits: opt(
      z
        .strictObject({
          cpu: opt(
            documented(
              quantity(),
              "The operator container's CPU limit. Unset: none, as CFS throttling would delay probes and lease renewals.",
            ),
          ),
          memory: opt(
            documented(
              quantity(),
              "The operator container's memory limit, required: room above the request so that a larger cluster or a re-list does not end in an OOM kill.",
              SYNTH.resources.limits.memory,
            ),
          ),
        })
        .meta({ description: "The operator container's limits; each quantity given replaces its default only." }),
    ),
  })
  .meta({ description: "The operator container's resources (requests must not exceed limits)." });

const jobMaxResources = z
  .strictObject({
    cpu: opt(
      documented(
        quantity(),
        "The most cpu each Job or CronJob container may request or be limited to; at least what the operator's own Jobs request.",
        SYNTH.jobMaxResources.cpu,
      ),
    ),
    memory: opt(
      documented(
        quantity(),
        "The most memory each Job or CronJob container may request or be limited to; at least what the operator's own Jobs are limited to.",
        SYNTH.jobMaxResources.memory,
      ),
    ),
  })
  .meta({
    description:
      "The most cpu and memory each container of the operator's Jobs and CronJobs may request or be limited to " +
      '(the confinement policy enforces it).',
  });

export const VALUES_SCHEMA = z
  .strictObject({
    namespace: opt(
      documented(
        dnsLabel(),
        "The namespace the operator runs in (its ServiceAccount, ConfigMap, Deployment, Lease...); with Helm, unset or the release's.",
        SYNTH.namespace,
      ),
    ),
    createNamespace: opt(
      documented(
        z.boolean(),
        'Create the namespace, labelled for the restricted Pod Security Standard; false when it is managed elsewhere ' +
          "(the Helm chart's values.yaml sets false: helm --create-namespace makes it).",
        SYNTH.createNamespace,
      ),
    ),
    installCrds: opt(
      documented(
        z.boolean(),
        'Include the Echo and ScheduledEcho CRDs; false when they are installed separately, e.g. by another install of the ' +
          'operator (with Helm, which installs crds/ itself: --skip-crds).',
        SYNTH.installCrds,
      ),
    ),
    nameOverride: opt(
      documented(
        dnsLabelOrEmpty(63),
        "The app.kubernetes.io/name label, and part of the objects' names (Helm's nameOverride); empty: echoperator.",
        '',
      ),
    ),
    // Leaves room for the '-config' and '-metrics' suffixes within a DNS label.
    fullnameOverride: opt(
      documented(
        dnsLabelOrEmpty(NAME_MAX_LENGTH),
        "The objects' name (Helm's fullnameOverride); empty: the release name, followed by -<name> unless it contains the name.",
        '',
      ),
    ),
    image: opt(image),
    command: opt(
      documented(
        z.array(z.string()).min(1, { error: 'must not be empty' }),
        "The container's command, not empty (the image holds the bundle at /app/echoperator.js).",
        SYNTH.command,
      ),
    ),
    args: opt(documented(z.array(z.string()), "The container's arguments (the operator has no subcommands).", SYNTH.args)),
    numWorkers: opt(documented(positive(), 'Number of concurrent reconcile workers (NUM_WORKERS).', SYNTH.workers)),
    watchNamespaces: opt(
      documented(
        z.array(dnsLabel()).min(1, { error: 'must list at least one namespace; leave it out to watch all' }),
        'Namespaces to watch (WATCH_NAMESPACES), which must exist: a Role and RoleBinding in each instead of a ClusterRole. ' +
          'Unset: all namespaces, with a ClusterRole.',
      ),
    ),
    logLevel: opt(documented(z.enum(['debug', 'info', 'warn', 'error']), "The operator's log level (LOG_LEVEL).", SYNTH.logLevel)),
    env: opt(
      documented(
        z.string(),
        "The Go chart's environment: local logs text (LOG_FORMAT=text), anything else JSON lines.",
        // Any value but 'local' gives the synth's JSON lines; 'production' is the Go chart's.
        SYNTH.logFormat === 'json' ? 'production' : 'local',
      ),
    ),
    metrics: opt(metrics),
    monitoring: opt(monitoring),
    healthPort: opt(
      documented(
        port(),
        'Port of the health server (GET /healthz for liveness, GET /readyz for readiness); must differ from metrics.port.',
        SYNTH.healthPort,
      ),
    ),
    resources: opt(resources),
    jobImage: opt(
      documented(
        imageReference(),
        'Image of the Jobs and CronJobs the operator creates to print messages (JOB_IMAGE); the confinement policy allows only it.',
        SYNTH.jobImage,
      ),
    ),
    jobMaxResources: opt(jobMaxResources),
    ha: opt(
      z
        .strictObject({
          enabled: opt(
            documented(
              z.boolean(),
              'Run replicaCount replicas that elect a leader through a Lease (only the leader reconciles; standbys keep warm caches), ' +
                'with the Lease RBAC, a PodDisruptionBudget and topology spread across nodes.',
              SYNTH.ha.enabled,
            ),
          ),
          replicaCount: opt(documented(positive(), 'Replicas when ha.enabled (one otherwise).', SYNTH.ha.replicas)),
          leaderElection: opt(leaderElection),
        })
        .meta({ description: 'High availability: several replicas and leader election.' }),
    ),
    terminationGracePeriodSeconds: opt(
      documented(
        z.int().min(OPERATOR_SHUTDOWN_TIMEOUT_SECONDS + 1, {
          error: `must be greater than the operator's ${OPERATOR_SHUTDOWN_TIMEOUT_SECONDS} s shutdown timeout`,
        }),
        `Seconds between SIGTERM and SIGKILL; more than the operator's ${OPERATOR_SHUTDOWN_TIMEOUT_SECONDS} s shutdown timeout.`,
        SYNTH.terminationGracePeriodSeconds,
      ),
    ),
    confineServiceAccount: opt(
      documented(
        z.boolean(),
        "A ValidatingAdmissionPolicy that lets the operator's ServiceAccount create and update only Jobs and CronJobs of the shape " +
          'it makes (docs/confinement.md); false only when a mutating webhook adds env, volumes, probes or sidecars to its Jobs.',
        SYNTH.confineServiceAccount,
      ),
    ),
    tenantRoles: opt(
      documented(
        z.boolean(),
        'An editor and a viewer ClusterRole per kind, aggregated into the built-in admin, edit and view roles so that namespace ' +
          'editors and viewers may use Echos and ScheduledEchos; false when RBAC is managed elsewhere.',
        SYNTH.tenantRoles,
      ),
    ),
    nodeSelector: opt(documented(labels(), 'Node labels the operator needs (pod spec.nodeSelector).', SYNTH.pod.nodeSelector)),
    tolerations: opt(documented(z.array(toleration), 'Taints the operator tolerates (pod spec.tolerations).', SYNTH.pod.tolerations)),
    affinity: opt(affinity),
    priorityClassName: opt(
      documented(dnsSubdomain(), "The pods' PriorityClass (pod spec.priorityClassName). Unset: the cluster's default priority."),
    ),
    imagePullSecrets: opt(
      documented(
        z.array(z.strictObject({ name: dnsSubdomain() })),
        "Secrets in the operator's namespace to pull the image with, as a list of {name} (pod spec.imagePullSecrets).",
        SYNTH.pod.imagePullSecrets,
      ),
    ),
    podAnnotations: opt(
      documented(stringMap(), "Extra annotations on the operator's pods (not the settings checksum).", SYNTH.pod.podAnnotations),
    ),
    podLabels: opt(
      documented(labels(), "Extra labels on the operator's pods (not the install's app.kubernetes.io ones).", SYNTH.pod.podLabels),
    ),
    extraEnv: opt(
      documented(
        z.array(envVar),
        "Extra environment variables of the operator's container (not the ones the install sets).",
        SYNTH.pod.extraEnv,
      ),
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
    override: ({ zodSchema, jsonSchema }) => {
      // z.int()'s safe-integer bounds say nothing a reader needs.
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      // With io 'input', zod drops the default of a schema holding a transform (extraEnv's divisor
      // quantity), as defaults are outputs; every default here is written as the user writes it.
      const dflt = z.globalRegistry.get(zodSchema)?.default;
      if (dflt !== undefined) jsonSchema.default = dflt;
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
