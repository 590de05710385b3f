/**
 * The bulky, value-light parts of the install as Helm named templates, made by the same pure
 * functions and constructs the Echoperator construct calls (infra/crds.ts, infra/rbac.ts,
 * infra/tenant-roles.ts, infra/confinement.ts, infra/monitoring/*), so the chart cannot drift from `npm run synth`.
 *
 * How: each body is built with SENTINELS, valid values no install would use (a name `zsnamez`,
 * a job image `zsjobimagez`...), written as indented JSON (valid YAML), and every sentinel is then
 * replaced by the Helm expression of the value it stands for. Calling the functions rather than
 * synthesizing the whole construct keeps each body apart from the conditions around it, which the
 * hand-kept skeleton (infra/helm/templates) holds. Values that the TypeScript computes (the leader
 * alerts' `for:`) are found by building twice with different inputs and marking what changed.
 *
 * Guarantees: Helm evaluates nothing of the bodies' own text (`{{ $value }}` in an alert stays as
 * written); a sentinel that a body does not contain, or one left after substitution, is an error.
 */
import { ApiObject, App, Chart } from 'cdk8s';
import * as k8s from '../../../infra/imports/k8s.js';
import { addConfinementPolicy } from '../../../infra/confinement.js';
import { installedCrds } from '../../../infra/crds.js';
import { dashboardJson } from '../../../infra/monitoring/dashboard.js';
import { alertRuleGroups } from '../../../infra/monitoring/alerts.js';
import { DEFAULTS, IMAGE_REPOSITORY, resolveEchoperatorProps, type ResolvedEchoperatorProps } from '../../../infra/props.js';
import { leaderElectionRules, metricsAuthRules, metricsReaderRules, operatorRules } from '../../../infra/rbac.js';
import { addTenantRoles } from '../../../infra/tenant-roles.js';
import { GO_ECHOPERATOR_IMAGES } from '../../../infra/values.js';

/** Sentinel -> the Helm expression (over the resolved config, `.`: echoperator.config) it stands for. */
const SENTINELS = {
  zsnamez: '.fullname',
  zsnsz: '.namespace',
  zsleasez: '.ha.leaseName',
  '/zspathz': '.metrics.path',
  zsjobimagez: '.jobImage',
  '7331m': '.jobMaxResources.cpu',
  '8887Mi': '.jobMaxResources.memory',
  'https://zsrunbookz.example/r': '.monitoring.rules.runbookUrl',
  zscertz: '.metrics.certSecret',
  zshandoverz: '.handoverFor',
} as const;
type Sentinel = keyof typeof SENTINELS;

/** `{{` and `}}` of a body's own text, written so that Helm prints them as they are. */
export function escapeBraces(text: string): string {
  return text.replace(/\{\{|\}\}/g, (m) => `{{ "${m}" }}`);
}

/**
 * A JSON body as template text: braces escaped, then each sentinel (inside a JSON string) replaced
 * by its value JSON-escaped, without the quotes toJson adds.
 */
export function templateBody(body: unknown, expected: readonly Sentinel[] = []): string {
  let text = escapeBraces(JSON.stringify(body, null, 2));
  for (const s of expected) {
    if (!text.includes(s)) throw new Error(`chart generator: sentinel ${s} not found in a body`);
    text = text.replaceAll(s, `{{ ${SENTINELS[s]} | toJson | trimPrefix "\\"" | trimSuffix "\\"" }}`);
  }
  for (const s of Object.keys(SENTINELS)) {
    if (text.includes(s)) throw new Error(`chart generator: sentinel ${s} left in a body`);
  }
  return text;
}

/** What cdk8s writes for `props` of a ClusterRole: rules in Kubernetes' spelling (nonResourceURLs). */
function rulesJson(rules: k8s.PolicyRule[]): unknown {
  const app = new App({ outdir: '/nonexistent', recordConstructMetadata: false });
  const role = new k8s.KubeClusterRole(new Chart(app, 'scratch'), 'Role', { metadata: { name: 'x' }, rules });
  return (role.toJson() as { rules: unknown }).rules;
}

interface ScratchObject {
  kind: string;
  metadata: { name: string; labels?: Record<string, string> };
  rules?: unknown;
  spec?: unknown;
}

/** The objects a construct-adding function writes into a scratch chart. */
function scratchObjects(add: (scope: Chart) => void): ScratchObject[] {
  const app = new App({ outdir: '/nonexistent', recordConstructMetadata: false });
  const chart = new Chart(app, 'scratch', { disableResourceNameHashes: true });
  add(chart);
  return chart.node.children.map((c) => (c as ApiObject).toJson() as ScratchObject);
}

/** Resolved props whose strings are the sentinels, for the bodies that read them. */
function sentinelProps(ha: boolean, cert: boolean, leaseDurationSeconds: number): ResolvedEchoperatorProps {
  const base = resolveEchoperatorProps({});
  return {
    ...base,
    name: 'zsnamez',
    namespace: 'zsnsz',
    jobImage: 'zsjobimagez',
    jobMaxResources: { cpu: '7331m', memory: '8887Mi' },
    metrics: { ...base.metrics, path: '/zspathz', certSecret: cert ? 'zscertz' : undefined },
    ha: { ...base.ha, enabled: ha, leaseName: 'zsleasez', leaseDurationSeconds, renewDeadlineSeconds: 2, retryPeriodSeconds: 1 },
    monitoring: { ...base.monitoring, rules: { ...base.monitoring.rules, runbookUrl: 'https://zsrunbookz.example/r' } },
  };
}

type AlertGroups = ReturnType<typeof alertRuleGroups>;

/**
 * The alerts for one (HA, certSecret) combination, the leader alerts' `for:` (which follows the
 * lease and scrape settings, alerts.ts handoverSeconds) marked: built twice with lease durations
 * far apart, a `for:` that differs is the computed one.
 */
function alertsBody(ha: boolean, cert: boolean): AlertGroups {
  const near = alertRuleGroups(sentinelProps(ha, cert, 15));
  const far = alertRuleGroups(sentinelProps(ha, cert, 3000));
  return near.map((group, g) => ({
    ...group,
    rules: group.rules.map((rule, i) => (rule.for !== far[g]!.rules[i]!.for ? { ...rule, for: 'zshandoverz' } : rule)),
  }));
}

/** A named template. */
const define = (name: string, body: string): string => `{{- define "${name}" -}}\n${body}\n{{- end }}\n`;

/** The chart's generated named templates (templates/_generated.tpl), each documented in the file. */
export function generatedTemplates(version: string): string {
  const tenantRoles = scratchObjects((scope) => addTenantRoles(scope, { namePrefix: 'zsnamez', labels: {} })).map((o) => ({
    suffix: o.metadata.name.slice('zsnamez'.length),
    aggregationLabels: o.metadata.labels ?? {},
    rules: o.rules,
  }));
  const confinement = scratchObjects((scope) =>
    addConfinementPolicy(scope, {
      name: 'zsconfinementz',
      serviceAccount: { name: 'zsnamez', namespace: 'zsnsz' },
      jobImage: 'zsjobimagez',
      jobMaxResources: { cpu: '7331m', memory: '8887Mi' },
      labels: {},
    }),
  );
  const policy = confinement.find((o) => o.kind === 'ValidatingAdmissionPolicy');
  if (!policy) throw new Error('chart generator: addConfinementPolicy made no ValidatingAdmissionPolicy');
  // The image settings the chart's _helpers.tpl reads, from the one place synth reads them too.
  const defaults = { ...DEFAULTS, version, imageRepository: IMAGE_REPOSITORY, goImages: GO_ECHOPERATOR_IMAGES };
  const parts = [
    '{{- /* Generated by scripts/ship/helm/generate.ts from infra/ (npm run chart): do not edit. */ -}}',
    define('echoperator.defaults', templateBody(defaults)),
    // Without Helm's keep annotation: templates/crds.yaml adds it when crds.keep is on.
    define('echoperator.crds', templateBody(installedCrds(false))),
    define('echoperator.rules.operator', templateBody(rulesJson(operatorRules()))),
    define('echoperator.rules.leaderElection', templateBody(rulesJson(leaderElectionRules('zsleasez')), ['zsleasez'])),
    define('echoperator.rules.metricsAuth', templateBody(rulesJson(metricsAuthRules()))),
    define('echoperator.rules.metricsReader', templateBody(rulesJson(metricsReaderRules('/zspathz')), ['/zspathz'])),
    define('echoperator.tenantRoles', templateBody(tenantRoles)),
    define('echoperator.confinementPolicySpec', templateBody(policy.spec, ['zsnamez', 'zsnsz', 'zsjobimagez', '7331m', '8887Mi'])),
    define('echoperator.dashboard', escapeBraces(dashboardJson())),
  ];
  for (const ha of [false, true]) {
    for (const cert of [false, true]) {
      const expected: Sentinel[] = ['zsnamez', 'zsnsz', 'https://zsrunbookz.example/r'];
      if (ha) expected.push('zsleasez', 'zshandoverz');
      if (cert) expected.push('zscertz');
      parts.push(define(`echoperator.alerts.ha-${ha}.cert-${cert}`, templateBody(alertsBody(ha, cert), expected)));
    }
  }
  return parts.join('\n');
}
