/**
 * The maps under a top-level key of the values file: crds, image, ha.leaderElection, metrics,
 * monitoring, resources and jobMaxResources, each key with its description and default.
 */
import { z } from 'zod';
import { IMAGE_PARTS } from '../src/config/validation.js';
import { ECHOPERATOR_VERSION, IMAGE_REPOSITORY, PROMETHEUS_DURATION, RUNBOOK_URL } from './props.js';
import { dnsLabel, dnsSubdomain, documented, labels, leaseSeconds, opt, port, quantity, SYNTH, urlPath } from './values-schema-formats.js';

/** The CRDs, in cert-manager's shape (crds.enabled, crds.keep); infra/crds.ts says what keep does. */
export const crds = z
  .strictObject({
    enabled: opt(
      documented(
        z.boolean(),
        'Include the Echo and ScheduledEcho CRDs (the Helm chart templates them, so helm upgrade upgrades them); false when they ' +
          'are installed separately, e.g. by another install of the operator.',
        SYNTH.crds.enabled,
      ),
    ),
    keep: opt(
      documented(
        z.boolean(),
        'Annotate the CRDs helm.sh/resource-policy: keep, so that helm uninstall, and a rollback or upgrade to a release without ' +
          'them, leave them (deleting a CRD deletes every Echo and ScheduledEcho).',
        SYNTH.crds.keep,
      ),
    ),
  })
  .meta({ description: 'The Echo and ScheduledEcho CRDs: in the install or not, kept by Helm or not.' });

/** The operator's image, in Helm's (and the Go chart's) shape; infra/values.ts joins it into one reference. */
export const image = z
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
export const leaderElection = z
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

export const metrics = z
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
            "the health port from no pod (NetworkPolicy always admits the pod's own node, whence the kubelet probes). Only a CNI that enforces NetworkPolicies applies it.",
        }),
    ),
  })
  .meta({
    description:
      "The Prometheus metrics endpoint, served over HTTPS to callers whose token may get its path (bind scrapers to the '<name>-metrics-reader' ClusterRole).",
  });

export const monitoring = z
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

export const resources = z
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

export const jobMaxResources = z
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
