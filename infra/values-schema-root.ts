/**
 * VALUES_SCHEMA: every top-level key of infra/values.yaml, and Values, the values it parses to.
 */
import { z } from 'zod';
import { NAME_MAX_LENGTH, OPERATOR_SHUTDOWN_TIMEOUT_SECONDS } from './props.js';
import {
  dnsLabel,
  dnsLabelOrEmpty,
  dnsSubdomain,
  documented,
  imageReference,
  labels,
  opt,
  port,
  positive,
  stringMap,
  SYNTH,
} from './values-schema-formats.js';
import { affinity, envVar, toleration } from './values-schema-k8s.js';
import { crds, image, jobMaxResources, leaderElection, metrics, monitoring, resources } from './values-schema-sections.js';

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
    crds: opt(crds),
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
        "The container's command, not empty (the image's entrypoint; it runs the bundle /app/echoperator.js from its code cache).",
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
