/**
 * The Go echoperator chart's values work with `npm run synth` (issue 33): its values.yaml, kept
 * verbatim in test/fixtures/go-chart/values.yaml (mmontes11/charts, charts/echoperator/values.yaml
 * at 1aa91af, the last version before the chart moved: see the folder's README.md), synthesizes
 * with each of its keys mapped to ours, and the two things it asks that we refuse (its own image,
 * another program; a ServiceMonitor that cannot verify the operator's certificate) are refused
 * with the reason and the way out.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { describe, it, type TestContext } from 'node:test';
import type { V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import type { Manifest } from '../../infra/chart.js';
import { VALUES_SCHEMA_FILE } from '../../infra/values-schema.js';
import { helmNames, parseValues, ValuesError } from '../../infra/values.js';
import { manifestsOf } from '../support/manifests.js';
import { runSynthInSharedProcess, type SynthRun } from '../support/synth.js';

const GO_VALUES_FILE = 'test/fixtures/go-chart/values.yaml';
/** sha256 of the file as published: the fixture must stay byte for byte the Go chart's. */
const GO_VALUES_SHA256 = 'df0b9f27e41effad8794ab6659f29a9ee6c6f4a60d2cd069fab051ff5acaa342';
const GO_VALUES = readFileSync(GO_VALUES_FILE, 'utf8');
/** Any repository but the Go operator's: its tag and pull policy still come from the Go file. */
const OUR_IMAGE = 'image: {repository: registry.example/echoperator-ts}\n';

/** `npm run synth -- -f <the Go chart's values.yaml> [-f overlay.yaml] [args]`. */
function synthGo(t: TestContext, overlay?: string, args: string[] = []): Promise<SynthRun> {
  const files: Record<string, string> = overlay === undefined ? {} : { 'overlay.yaml': overlay };
  return runSynthInSharedProcess(t, ['-f', GO_VALUES_FILE, ...(overlay === undefined ? [] : ['-f', '{dir}/overlay.yaml']), ...args], files);
}

function installed(r: SynthRun): { deployment: V1Deployment; settings: Record<string, string>; objects: Manifest[] } {
  assert.equal(r.status, 0, r.stderr);
  const deployment = manifestsOf<V1Deployment>(r.objects, 'Deployment')[0];
  const settings = manifestsOf<V1ConfigMap>(r.objects, 'ConfigMap')[0]?.data;
  assert.ok(deployment && settings);
  return { deployment, settings, objects: r.objects };
}

const validate = new Ajv({ allErrors: true, strict: false }).compile(JSON.parse(readFileSync(VALUES_SCHEMA_FILE, 'utf8')) as object);

describe("the Go echoperator chart's values.yaml", () => {
  it('is the published file, byte for byte', () => {
    assert.equal(createHash('sha256').update(readFileSync(GO_VALUES_FILE)).digest('hex'), GO_VALUES_SHA256);
  });

  it('alone is refused with both reasons at once: its image is the Go operator, its ServiceMonitor could not verify the certificate', async (t) => {
    const r = await synthGo(t);
    assert.equal(r.status, 1);
    assert.match(r.stderr, /image\.repository mmontes11\/echoperator is the Go echoperator's image/);
    assert.match(r.stderr, /monitoring\.enabled: without metrics\.certSecret/);
    assert.match(r.stderr, /Set metrics\.certSecret to a kubernetes\.io\/tls Secret/);
    assert.match(r.stderr, /or set monitoring\.insecureSkipVerify: true/);
    assert.equal(r.objects.length, 0);
    const ours = await synthGo(t, OUR_IMAGE);
    assert.equal(ours.status, 1);
    assert.doesNotMatch(ours.stderr, /Go echoperator's image/);
    assert.match(ours.stderr, /or set monitoring\.insecureSkipVerify: true/);
    assert.equal(validate(parse(GO_VALUES)), false, 'values.schema.json accepts the Go values without a way out');
    assert.ok(validate(parse(GO_VALUES + 'metrics: {certSecret: tls}\n')), JSON.stringify(validate.errors));
  });

  it('with monitoring.insecureSkipVerify: true synthesizes, each Go key where its chart put it', async (t) => {
    const overlay = `monitoring: {insecureSkipVerify: true}\n${OUR_IMAGE}`;
    assert.ok(validate({ ...(parse(GO_VALUES) as object), ...(parse(overlay) as object) }), JSON.stringify(validate.errors));
    const { deployment, settings, objects } = installed(await synthGo(t, overlay));
    // ha.enabled + ha.replicaCount, ha.leaderElection.*
    assert.equal(deployment.spec!.replicas, 3);
    assert.equal(settings.HA_ENABLED, 'true');
    assert.equal(settings.HA_LEASE_DURATION_SECONDS, '15');
    assert.equal(settings.HA_RENEW_DEADLINE_SECONDS, '10');
    assert.equal(settings.HA_RETRY_PERIOD_SECONDS, '2');
    assert.equal(manifestsOf(objects, 'PodDisruptionBudget').length, 1);
    // numWorkers, logLevel, env: production
    assert.equal(settings.NUM_WORKERS, '4');
    assert.equal(settings.LOG_LEVEL, 'info');
    assert.equal(settings.LOG_FORMAT, 'json');
    // image.repository:tag, image.pullPolicy
    const container = deployment.spec!.template.spec!.containers[0]!;
    assert.equal(container.image, 'registry.example/echoperator-ts:v0.0.1');
    assert.equal(container.imagePullPolicy, 'IfNotPresent');
    // monitoring.enabled/namespace/interval/labels: a ServiceMonitor; monitoring.path/port: metrics'
    const monitor = manifestsOf<Manifest & { spec: { endpoints: { interval: string; path: string }[] } }>(objects, 'ServiceMonitor');
    assert.equal(monitor.length, 1);
    assert.equal(monitor[0]!.metadata.namespace, 'monitoring');
    assert.equal(monitor[0]!.metadata.labels?.release, 'monitoring');
    assert.equal(monitor[0]!.spec.endpoints[0]!.interval, '10s');
    assert.equal(monitor[0]!.spec.endpoints[0]!.path, '/metrics');
    assert.equal(settings.METRICS_PORT, '2112');
    // nameOverride: "" and fullnameOverride: "": the default names
    assert.equal(deployment.metadata!.name, 'echoperator');
    assert.equal(deployment.metadata!.labels!['app.kubernetes.io/name'], 'echoperator');
    // resources: {} and nodeSelector: {}: our defaults
    assert.deepEqual(container.resources, { requests: { cpu: '50m', memory: '128Mi' }, limits: { memory: '512Mi' } });
    assert.equal(deployment.spec!.template.spec!.nodeSelector, undefined);
  });

  it('with metrics.certSecret (and the ServiceMonitor beside it) synthesizes; a certSecret alone names the namespace rule', async (t) => {
    const alone = await synthGo(t, `metrics: {certSecret: echoperator-metrics-tls}\n${OUR_IMAGE}`);
    assert.equal(alone.status, 1);
    assert.match(alone.stderr, /monitoring\.namespace must be the install's namespace \(echoperator\) with metrics\.certSecret/);
    const { objects } = installed(
      await synthGo(t, `metrics: {certSecret: echoperator-metrics-tls}\nmonitoring: {namespace: echoperator}\n${OUR_IMAGE}`),
    );
    assert.equal(manifestsOf(objects, 'ServiceMonitor')[0]?.metadata.namespace, 'echoperator');
  });

  it('every Go key set to something else lands where it should', async (t) => {
    const overlay = `
nameOverride: echo
image: {repository: registry.example.com/echoperator, tag: v1.2.3, pullPolicy: Always}
env: local
logLevel: debug
numWorkers: 8
ha:
  leaderElection: {leaseDurationSeconds: 30, renewDeadlineSeconds: 20, retryPeriodSeconds: 5}
  replicaCount: 2
metrics: {port: 9090, path: /stats}
monitoring: {path: /stats, port: 9090, interval: 1m, labels: {release: kps}, insecureSkipVerify: true}
resources: {requests: {cpu: 100m, memory: 256Mi}, limits: {memory: 1Gi}}
nodeSelector: {kubernetes.io/os: linux}
`;
    assert.ok(validate(parse(overlay)), JSON.stringify(validate.errors));
    const { deployment, settings, objects } = installed(await synthGo(t, overlay, ['--release-name', 'team-a']));
    assert.equal(deployment.metadata!.name, 'team-a-echo');
    assert.equal(deployment.metadata!.labels!['app.kubernetes.io/name'], 'echo');
    assert.equal(deployment.metadata!.labels!['app.kubernetes.io/instance'], 'team-a');
    assert.deepEqual(deployment.spec!.selector.matchLabels, { 'app.kubernetes.io/name': 'echo', 'app.kubernetes.io/instance': 'team-a' });
    assert.equal(deployment.spec!.replicas, 2);
    assert.equal(settings.HA_LEASE_DURATION_SECONDS, '30');
    assert.equal(settings.HA_RENEW_DEADLINE_SECONDS, '20');
    assert.equal(settings.HA_RETRY_PERIOD_SECONDS, '5');
    assert.equal(settings.NUM_WORKERS, '8');
    assert.equal(settings.LOG_LEVEL, 'debug');
    assert.equal(settings.LOG_FORMAT, 'text');
    assert.equal(settings.METRICS_PORT, '9090');
    assert.equal(settings.METRICS_PATH, '/stats');
    const spec = deployment.spec!.template.spec!;
    assert.equal(spec.containers[0]!.image, 'registry.example.com/echoperator:v1.2.3');
    assert.equal(spec.containers[0]!.imagePullPolicy, 'Always');
    assert.deepEqual(spec.containers[0]!.resources, { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } });
    assert.deepEqual(spec.nodeSelector, { 'kubernetes.io/os': 'linux' });
    const monitor = manifestsOf<Manifest & { spec: { endpoints: { interval: string; path: string }[] } }>(objects, 'ServiceMonitor')[0];
    assert.ok(monitor, 'a ServiceMonitor');
    assert.equal(monitor.metadata.labels?.release, 'kps');
    assert.deepEqual(
      monitor.spec.endpoints.map((e) => [e.interval, e.path]),
      [['1m', '/stats']],
    );
    // fullnameOverride wins over the release name and nameOverride.
    const full = installed(await synthGo(t, `${overlay}fullnameOverride: ops-echo\n`, ['--release-name', 'team-a']));
    assert.equal(full.deployment.metadata!.name, 'ops-echo');
    assert.equal(full.settings.NUM_WORKERS, '8');
  });
});

describe('image, names and the Go chart aliases', () => {
  it('joins image.repository with the tag, or with the digest when one is set', () => {
    const digest = `sha256:${'a'.repeat(64)}`;
    assert.equal(parseValues('image: {repository: r.example/x, tag: "2"}\n').image, 'r.example/x:2');
    assert.equal(parseValues(`image: {repository: r.example/x, tag: "2", digest: "${digest}"}\n`).image, `r.example/x@${digest}`);
    assert.equal(parseValues('image: {tag: v9}\n').image, 'ghcr.io/mmontes11/echoperator-ts:v9');
    // Empty (Helm's "" convention) or absent: the default reference, left to the construct.
    assert.equal(parseValues('image: {tag: "", digest: "", pullPolicy: Never}\n').image, undefined);
    assert.equal(parseValues('image: {pullPolicy: Never}\n').imagePullPolicy, 'Never');
  });

  it("computes Helm's scaffold names: nameOverride, fullnameOverride, the release name, 63 characters then our 55", () => {
    assert.deepEqual(helmNames('echoperator', undefined, undefined), { name: 'echoperator', fullname: 'echoperator' });
    assert.deepEqual(helmNames('prod', undefined, undefined), { name: 'echoperator', fullname: 'prod-echoperator' });
    assert.deepEqual(helmNames('prod-echoperator-1', undefined, undefined), { name: 'echoperator', fullname: 'prod-echoperator-1' });
    assert.deepEqual(helmNames('prod', 'echo', ''), { name: 'echo', fullname: 'prod-echo' });
    assert.deepEqual(helmNames('prod', 'echo', 'mine'), { name: 'echo', fullname: 'mine' });
    // 53 characters (Helm's longest release name) and the chart's name: 65, cut to 63, too long for our suffixes.
    assert.throws(
      () => helmNames('r'.repeat(53), undefined, undefined),
      (e: unknown) => e instanceof ValuesError && /must be a DNS label of at most 55 characters.*set fullnameOverride/.test(e.message),
    );
    assert.equal(helmNames(`${'r'.repeat(42)}`, undefined, undefined).fullname.length, 54);
    assert.throws(() => helmNames('r'.repeat(54), undefined, undefined), /the release name must be at most 53/);
  });

  it('accepts monitoring.port and monitoring.path equal to metrics.*, in the synth and the JSON Schema', () => {
    for (const good of [
      'monitoring: {port: 2112, path: /metrics}\n',
      'metrics: {port: 9090, path: /stats}\nmonitoring: {port: 9090, path: /stats}\n',
      'monitoring: {enabled: true, insecureSkipVerify: true}\n',
      'monitoring: {enabled: true}\nmetrics: {insecurePlainHttp: true}\n',
    ]) {
      assert.ok(validate(parse(good)), `${good}: ${JSON.stringify(validate.errors)}`);
      assert.doesNotThrow(() => parseValues(good), good);
    }
    // The JSON Schema compares with the default only (draft-07 cannot compare two values): the synth refuses the rest.
    assert.throws(() => parseValues('metrics: {port: 9090}\nmonitoring: {port: 2112}\n'), /monitoring\.port is the Go chart's name/);
  });
});
