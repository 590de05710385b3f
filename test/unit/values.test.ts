/**
 * The values file and its one schema (infra/values-schema.ts): the committed values.schema.json
 * is what the schema generates and a standard JSON Schema validator (ajv) accepts values.yaml with
 * it; the pod settings Helm users expect (nodeSelector, tolerations, affinity, priorityClassName,
 * imagePullSecrets, podAnnotations, podLabels, extraEnv) reach the Deployment's pod template
 * through `npm run synth`, and a wrongly shaped or unsafe value fails naming the key.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, it, type TestContext } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import { Ajv } from 'ajv';
import { parse, stringify } from 'yaml';
import { synthesize, type Manifest } from '../../infra/chart.js';
import {
  CONFIG_CHECKSUM_ANNOTATION,
  EchoperatorPropsError,
  POD_ENV_NAMES,
  resolveEchoperatorProps,
  type EchoperatorProps,
} from '../../infra/echoperator.js';
import { VALUES_SCHEMA_FILE, valuesJsonSchemaText } from '../../infra/values-schema.js';
import { parseValues, ValuesError } from '../../infra/values.js';
import { manifestsOf } from '../support/manifests.js';
import { runSynthInSharedProcess } from '../support/synth.js';

/** Every new key, as a Helm user writes it. */
const POD_VALUES = `
nodeSelector: {kubernetes.io/os: linux}
tolerations:
  - {key: dedicated, operator: Equal, value: operators, effect: NoSchedule}
  - {key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 60}
affinity:
  nodeAffinity:
    requiredDuringSchedulingIgnoredDuringExecution:
      nodeSelectorTerms: [{matchExpressions: [{key: kubernetes.io/arch, operator: In, values: [amd64, arm64]}]}]
    preferredDuringSchedulingIgnoredDuringExecution:
      - {weight: 10, preference: {matchFields: [{key: metadata.name, operator: NotIn, values: [node-a]}]}}
  podAntiAffinity:
    preferredDuringSchedulingIgnoredDuringExecution:
      - weight: 50
        podAffinityTerm:
          topologyKey: topology.kubernetes.io/zone
          labelSelector: {matchLabels: {app.kubernetes.io/name: echoperator}, matchExpressions: [{key: tier, operator: Exists}]}
          namespaceSelector: {}
          namespaces: [echoperator]
priorityClassName: system-cluster-critical
imagePullSecrets: [{name: registry-credentials}, {name: mirror}]
podAnnotations: {example.com/team: platform}
podLabels: {team: platform}
extraEnv:
  - {name: WORK_QUEUE_ORDER, value: fifo}
  - name: MEMORY_MIB
    valueFrom: {resourceFieldRef: {containerName: operator, resource: limits.memory, divisor: 1Mi}}
  - name: TOKEN
    valueFrom: {secretKeyRef: {name: creds, key: token, optional: true}}
`;

function deployment(objects: Manifest[]): V1Deployment {
  const d = manifestsOf<V1Deployment>(objects, 'Deployment')[0];
  assert.ok(d, 'a Deployment');
  return d;
}

/** Runs `npm run synth -- -f <values>` (infra/main.ts) into a temporary folder, in the file's synth process. */
function synth(t: TestContext, values: string): Promise<{ status: number | null; stderr: string; objects: Manifest[] }> {
  return runSynthInSharedProcess(t, ['-f', '{dir}/values.yaml'], { 'values.yaml': values });
}

describe('values.schema.json', () => {
  it('is exactly what infra/values-schema.ts generates (npm run gen:values-schema), and --check agrees', { timeout: 60_000 }, async () => {
    assert.equal(
      readFileSync(VALUES_SCHEMA_FILE, 'utf8'),
      await valuesJsonSchemaText(),
      'infra/values.schema.json is out of date: run `npm run gen:values-schema`',
    );
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/ship/gen/values-schema.ts', '--check'], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
  });

  it('validates infra/values.yaml and every new key with a standard validator (ajv, draft-07), and refuses what the synth refuses', () => {
    const schema = JSON.parse(readFileSync(VALUES_SCHEMA_FILE, 'utf8')) as { $schema: string };
    assert.equal(schema.$schema, 'http://json-schema.org/draft-07/schema#');
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    const check = (text: string): boolean => validate(parse(text) ?? {});
    assert.ok(check(readFileSync('infra/values.yaml', 'utf8')), JSON.stringify(validate.errors));
    assert.ok(check(POD_VALUES), JSON.stringify(validate.errors));
    assert.ok(check('image:\nmetrics: {port: 9090, certSecret: tls}\nha: {enabled: true}\n'), JSON.stringify(validate.errors));
    for (const bad of [
      'ha: {enabeld: true}\n',
      'numWorkers: "4"\n',
      'tolerations: [{effect: Sometimes}]\n',
      'imagePullSecrets: [registry-credentials]\n',
      'podLabels: {team: [a]}\n',
      'extraEnv: [{name: A, valueFrom: {secretRef: {name: x}}}]\n',
      'affinity: {nodeAffinity: {required: {}}}\n',
    ]) {
      assert.equal(check(bad), false, `ajv accepts ${bad}`);
      assert.throws(() => parseValues(bad), ValuesError, `the synth accepts ${bad}`);
    }
  });
});

/** The part of a values.schema.json node these checks read. */
interface SchemaNode {
  type?: string;
  description?: string;
  default?: unknown;
  properties?: Record<string, SchemaNode>;
  anyOf?: SchemaNode[];
}

/** A key's own schema: zod writes an optional key as `anyOf: [value, {type: 'null'}]`. */
const valueOf = (node: SchemaNode): SchemaNode => node.anyOf?.find((b) => b.type !== 'null') ?? node;

/**
 * Every key of the values, `[path, node, whole]`, by the README table's rule: an object is walked
 * into unless it is described as a whole (a Kubernetes structure such as affinity), then it is one key.
 */
function* valuesKeys(node: SchemaNode, prefix = ''): Generator<[string, SchemaNode, boolean]> {
  for (const [name, child] of Object.entries(valueOf(node).properties ?? {})) {
    const { description, properties = {} } = valueOf(child);
    const whole =
      Object.keys(properties).length === 0 || (description !== undefined && !Object.values(properties).some((c) => valueOf(c).description));
    yield [prefix + name, valueOf(child), whole];
    if (!whole) yield* valuesKeys(child, `${prefix}${name}.`);
  }
}

describe("values.schema.json's descriptions and defaults", () => {
  const schema = JSON.parse(readFileSync(VALUES_SCHEMA_FILE, 'utf8')) as SchemaNode;
  const keys = [...valuesKeys(schema)];
  // Keys whose synth default depends on another value or means "none": no `default`, an "Unset: ..." instead.
  const COMPUTED = [
    'watchNamespaces',
    'metrics.certSecret',
    'monitoring.namespace',
    'monitoring.path',
    'monitoring.port',
    'monitoring.rules.labels',
    'monitoring.dashboard.namespace',
    'resources.limits.cpu',
    'affinity',
    'priorityClassName',
  ];

  it('describe every key, the objects holding keys included', () => {
    assert.ok(keys.length > 60, `only ${keys.length} keys found`);
    assert.deepEqual(
      keys.filter(([, node]) => !node.description?.trim()).map(([key]) => key),
      [],
      'keys without a description in infra/values-schema.ts',
    );
  });

  it('give a default for every key but the computed ones, which say what unset means', () => {
    const withoutDefault = keys.filter(([, node, whole]) => whole && node.default === undefined).map(([key]) => key);
    assert.deepEqual(withoutDefault, COMPUTED);
    for (const [key, node] of keys.filter(([k]) => COMPUTED.includes(k))) assert.match(node.description!, /Unset: /, key);
  });

  it("are the synth's defaults: a values file writing every default resolves to exactly what an empty one does", () => {
    const everyDefault: Record<string, unknown> = {};
    for (const [key, node] of keys) {
      if (node.default === undefined) continue;
      const path = key.split('.');
      let at = everyDefault;
      for (const name of path.slice(0, -1)) at = (at[name] ??= {}) as Record<string, unknown>;
      at[path.at(-1)!] = node.default;
    }
    assert.ok(Object.keys(everyDefault).length > 20, JSON.stringify(everyDefault));
    const validate = new Ajv({ allErrors: true, strict: false }).compile(schema);
    assert.ok(validate(everyDefault), `values.schema.json refuses its own defaults: ${JSON.stringify(validate.errors)}`);
    assert.deepEqual(resolveEchoperatorProps(parseValues(stringify(everyDefault))), resolveEchoperatorProps(parseValues('')));
  });
});

describe('values.schema.json is as strict as the synth', () => {
  // One bad value per format or range the construct checks: the JSON Schema (as Helm and editors
  // read it) must refuse each, and so must the synth, naming the key.
  const BAD_VALUES: [string, RegExp][] = [
    ['ha: {replicaCount: -1}\n', /ha\.replicaCount/],
    ['ha: {replicaCount: 0}\n', /ha\.replicaCount/],
    ['metrics: {port: 70000}\n', /metrics\.port/],
    ['metrics: {port: 0}\n', /metrics\.port/],
    ['healthPort: 65536\n', /healthPort/],
    ['numWorkers: 0\n', /numWorkers/],
    ['resources: {requests: {cpu: lots}}\n', /resources\.requests\.cpu/],
    ['resources: {limits: {memory: 1GB}}\n', /resources\.limits\.memory/],
    ['jobMaxResources: {cpu: "-1"}\n', /jobMaxResources\.cpu/],
    ['namespace: Team_A\n', /namespace/],
    ['fullnameOverride: a-name-longer-than-fifty-five-characters-which-leaves-no-room\n', /fullnameOverride/],
    ['nameOverride: Echo_Operator\n', /nameOverride/],
    ['image: {repository: "Not An Image"}\n', /image\.repository/],
    ['image: {repository: "ghcr.io/x/echoperator:1.0"}\n', /image\.repository/],
    ['image: {tag: "1 0"}\n', /image\.tag/],
    ['image: {digest: "sha256:abc"}\n', /image\.digest/],
    ['image: {pullPolicy: Sometimes}\n', /image\.pullPolicy/],
    ['image: ghcr.io/x/echoperator:1.0\n', /image is a map now: image\.repository, image\.tag, image\.digest/],
    ['monitoring: {port: 9090}\n', /monitoring\.port is the Go chart's name for metrics\.port; set metrics\.port/],
    ['monitoring: {path: /stats}\n', /monitoring\.path is the Go chart's name for metrics\.path; set metrics\.path/],
    ['env: [local]\n', /env must be a string/],
    ['jobImage: "busybox:"\n', /jobImage/],
    ['watchNamespaces: []\n', /watchNamespaces/],
    ['watchNamespaces: [Team-A]\n', /watchNamespaces\[0\]/],
    ['metrics: {path: metrics}\n', /metrics\.path/],
    ['metrics: {path: "/*"}\n', /metrics\.path/],
    ['metrics: {path: "*"}\n', /metrics\.path/],
    ['metrics: {path: "/metrics*"}\n', /metrics\.path/],
    ['metrics: {path: "/api/*/x"}\n', /metrics\.path/],
    ['monitoring: {path: "/*"}\n', /monitoring\.path/],
    ['metrics: {certSecret: My_Secret}\n', /metrics\.certSecret/],
    ['metrics: {networkPolicy: {namespaceLabels: {"bad key!": x}}}\n', /namespaceLabels/],
    ['ha: {leaderElection: {leaseDurationSeconds: 7200}}\n', /ha\.leaderElection\.leaseDurationSeconds/],
    ['ha: {leaderElection: {leaseName: Lease_Name}}\n', /ha\.leaderElection\.leaseName/],
    // Keys renamed in 0.1.0: refused naming the new key.
    ['workers: 4\n', /workers is numWorkers now/],
    ['name: echoperator\n', /name is nameOverride \/ fullnameOverride now/],
    ['imagePullPolicy: Always\n', /imagePullPolicy is image\.pullPolicy now/],
    ['ha: {replicas: 3}\n', /ha\.replicas is ha\.replicaCount now/],
    ['ha: {leaseDurationSeconds: 15}\n', /ha\.leaseDurationSeconds is ha\.leaderElection\.leaseDurationSeconds now/],
    // Renamed in 0.2.0, in cert-manager's shape.
    ['installCrds: false\n', /installCrds is crds\.enabled now/],
    ['crds: {enabled: "no"}\n', /crds\.enabled/],
    ['crds: {keep: true, upgrade: true}\n', /crds/],
    ['terminationGracePeriodSeconds: 10\n', /terminationGracePeriodSeconds/],
    ['command: []\n', /command/],
    ['podLabels: {team: "a b"}\n', /podLabels/],
    ['priorityClassName: System_Critical\n', /priorityClassName/],
    ['monitoring: {interval: 30 seconds}\n', /monitoring\.interval/],
    [
      'monitoring: {prometheusServiceAccount: {name: prometheus, namespace: Monitoring}}\n',
      /monitoring\.prometheusServiceAccount\.namespace/,
    ],
  ];

  it(`refuses each of ${BAD_VALUES.length} bad values files with ajv (draft-07) and with the synth, naming the key`, () => {
    const validate = new Ajv({ allErrors: true, strict: false }).compile(JSON.parse(readFileSync(VALUES_SCHEMA_FILE, 'utf8')) as object);
    for (const [bad, key] of BAD_VALUES) {
      assert.equal(validate(parse(bad)), false, `values.schema.json accepts ${bad}`);
      assert.throws(
        () => parseValues(bad),
        (e: unknown) => e instanceof ValuesError && key.test(e.message),
        `the synth: ${bad}`,
      );
    }
  });
});

describe('the pod settings Helm users expect', () => {
  it('npm run synth with each new key in a values file puts it on the pod template', { timeout: 60_000 }, async (t) => {
    const { status, stderr, objects } = await synth(t, POD_VALUES);
    assert.equal(status, 0, stderr);
    // The values file as written, to compare with the pod template field by field.
    const values = parse(POD_VALUES) as Record<'nodeSelector' | 'tolerations' | 'affinity' | 'extraEnv', unknown>;
    const template = deployment(objects).spec!.template;
    const spec = template.spec!;
    assert.deepEqual(spec.nodeSelector, values.nodeSelector);
    assert.deepEqual(spec.tolerations, values.tolerations);
    // Every field as written: none dropped by the synthesis on the way.
    assert.deepEqual(spec.affinity, values.affinity);
    assert.equal(spec.priorityClassName, 'system-cluster-critical');
    assert.deepEqual(spec.imagePullSecrets, [{ name: 'registry-credentials' }, { name: 'mirror' }]);
    assert.equal(template.metadata!.annotations!['example.com/team'], 'platform');
    assert.equal(template.metadata!.labels!.team, 'platform');
    const env = spec.containers[0]!.env!;
    assert.deepEqual(env.slice(-3), values.extraEnv);
    assert.deepEqual(
      env.slice(0, -3).map((e) => e.name),
      POD_ENV_NAMES,
    );
  });

  it('leaves the selector, the settings checksum and the default pod as they were', () => {
    const plain = synthesize({});
    const withPod = synthesize(parseValues(POD_VALUES));
    const [d0, d1] = [deployment(plain.objects), deployment(withPod.objects)];
    assert.deepEqual(d1.spec!.selector, d0.spec!.selector);
    assert.deepEqual(d1.metadata!.labels, d0.metadata!.labels, 'pod labels stay on the pods');
    assert.equal(
      d1.spec!.template.metadata!.annotations![CONFIG_CHECKSUM_ANNOTATION],
      d0.spec!.template.metadata!.annotations![CONFIG_CHECKSUM_ANNOTATION],
    );
    for (const [k, v] of Object.entries(d0.spec!.selector.matchLabels!)) assert.equal(d1.spec!.template.metadata!.labels![k], v);
    // The default install has none of the new fields: an upgrade without them changes nothing.
    for (const key of ['nodeSelector', 'tolerations', 'affinity', 'priorityClassName', 'imagePullSecrets']) {
      assert.equal(key in d0.spec!.template.spec!, false, key);
    }
    assert.deepEqual(Object.keys(d0.spec!.template.metadata!.annotations!), [CONFIG_CHECKSUM_ANNOTATION]);
    // The confinement policy binds the ServiceAccount, not the pod: unchanged.
    const policies = (o: Manifest[]) => o.filter((x) => x.kind.startsWith('ValidatingAdmissionPolicy'));
    assert.deepEqual(policies(withPod.objects), policies(plain.objects));
  });

  it('a wrongly shaped value fails npm run synth naming the key', { timeout: 60_000 }, async (t) => {
    const r = await synth(t, 'tolerations: [{key: dedicated, effect: Sometimes}]\n');
    assert.equal(r.status, 1);
    assert.match(
      r.stderr,
      /synth failed: .*values\.yaml: tolerations\[0\]\.effect must be one of NoSchedule, PreferNoSchedule, NoExecute, got "Sometimes"/,
    );
    const e = await synth(t, 'extraEnv: [{name: NAMESPACE, value: other}]\n');
    assert.equal(e.status, 1);
    assert.match(e.stderr, /extraEnv\[0\]\.name NAMESPACE is set by the install itself/);
  });

  it('refuses each wrongly shaped value naming the key', () => {
    const cases: [string, RegExp][] = [
      ['nodeSelector: [linux]\n', /nodeSelector must be a mapping, got \["linux"\]/],
      ['nodeSelector: {kubernetes.io/os: 1}\n', /nodeSelector\["kubernetes\.io\/os"\] must be a string, got 1/],
      ['tolerations: {key: a}\n', /tolerations must be a list/],
      ['tolerations: [{key: a, tolerationSeconds: soon}]\n', /tolerations\[0\]\.tolerationSeconds must be an integer, got "soon"/],
      ['tolerations: [{key: a, operator: Is}]\n', /tolerations\[0\]\.operator must be one of Exists, Equal, got "Is"/],
      ['affinity: {nodeAffinity: {required: {}}}\n', /unknown key affinity\.nodeAffinity\.required/],
      [
        'affinity: {podAffinity: {requiredDuringSchedulingIgnoredDuringExecution: [{labelSelector: {}}]}}\n',
        /affinity\.podAffinity\.requiredDuringSchedulingIgnoredDuringExecution\[0\]\.topologyKey must be a string/,
      ],
      ['priorityClassName: 10\n', /priorityClassName must be a string, got 10/],
      ['imagePullSecrets: [registry-credentials]\n', /imagePullSecrets\[0\] must be a mapping, got "registry-credentials"/],
      ['imagePullSecrets: [{name: a, namespace: b}]\n', /unknown key imagePullSecrets\[0\]\.namespace/],
      ['podAnnotations: {a: true}\n', /podAnnotations\.a must be a string, got true/],
      ['podLabels: team\n', /podLabels must be a mapping, got "team"/],
      ['extraEnv: {A: b}\n', /extraEnv must be a list/],
      ['extraEnv: [{name: A, value: 1}]\n', /extraEnv\[0\]\.value must be a string, got 1/],
      ['extraEnv: [{name: A, valueFrom: {secretRef: {name: x}}}]\n', /unknown key extraEnv\[0\]\.valueFrom\.secretRef/],
    ];
    for (const [text, message] of cases) {
      assert.throws(
        () => parseValues(text),
        (e: unknown) => e instanceof ValuesError && message.test(e.message),
        `${text.trim()} -> ${message.source}`,
      );
    }
  });

  it('refuses values the API server would refuse or that would break the install, naming the prop', () => {
    const cases: [EchoperatorProps, RegExp][] = [
      [{ nodeSelector: { 'bad key!': 'x' } }, /nodeSelector key "bad key!" must be a label key/],
      [{ nodeSelector: { os: 'not a value' } }, /nodeSelector\["os"\] must be a label value/],
      [{ tolerations: [{ value: 'x' }] }, /tolerations\[0\]\.operator must be Exists when key is empty/],
      [{ tolerations: [{ key: 'a', operator: 'Exists', value: 'x' }] }, /tolerations\[0\]\.value must be empty when operator is Exists/],
      [{ tolerations: [{ key: 'a', effect: 'NoSchedule', tolerationSeconds: 5 }] }, /tolerationSeconds applies only with effect NoExecute/],
      [{ tolerations: [{ key: 'a', effect: 'Sometimes' }] }, /tolerations\[0\]\.effect must be one of/],
      [
        { affinity: { nodeAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 0, preference: {} }] } } },
        /affinity\.nodeAffinity\.preferredDuringSchedulingIgnoredDuringExecution\[0\]\.weight must be an integer from 1 to 100/,
      ],
      [
        { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: '' }] } } },
        /affinity\.podAntiAffinity\.requiredDuringSchedulingIgnoredDuringExecution\[0\]\.topologyKey must be set/,
      ],
      [{ priorityClassName: 'Not_A_Name' }, /priorityClassName must be a PriorityClass name/],
      [{ imagePullSecrets: [{ name: 'UPPER' }] }, /imagePullSecrets\[0\]\.name must be a Secret name/],
      [{ imagePullSecrets: [{ name: 'a' }, { name: 'a' }] }, /imagePullSecrets lists a twice/],
      [{ podAnnotations: { [CONFIG_CHECKSUM_ANNOTATION]: 'x' } }, /podAnnotations must not set echoperator\.mmontes\.io\/config-checksum/],
      [{ podLabels: { 'app.kubernetes.io/name': 'other' } }, /podLabels must not set app\.kubernetes\.io\/name: the install sets it/],
      [{ podLabels: { 'app.kubernetes.io/instance': 'other' } }, /podLabels must not set app\.kubernetes\.io\/instance/],
      [{ extraEnv: [{ name: '1A', value: 'x' }] }, /extraEnv\[0\]\.name must be an environment variable name/],
      [{ extraEnv: [{ name: 'A' }, { name: 'A' }] }, /extraEnv sets A twice/],
      [
        { extraEnv: [{ name: 'A', value: 'x', valueFrom: { fieldRef: { fieldPath: 'spec.nodeName' } } }] },
        /extraEnv\[0\] must set value or valueFrom, not both/,
      ],
      [{ extraEnv: [{ name: 'A', valueFrom: {} }] }, /extraEnv\[0\]\.valueFrom must set exactly one of/],
    ];
    // Every variable the install sets itself, from the pod env and from the settings ConfigMap.
    for (const name of POD_ENV_NAMES) {
      cases.push([
        { extraEnv: [{ name, value: 'x' }] },
        new RegExp(`extraEnv\\[0\\]\\.name ${name} is set by the install itself, from the downward API`),
      ]);
    }
    for (const name of ['LOG_LEVEL', 'NUM_WORKERS', 'HA_LEASE_LOCK_NAME', 'METRICS_CERT_DIR']) {
      const message = `extraEnv\\[0\\]\\.name ${name} is set by the install itself, in the settings ConfigMap: .* set it through its values key`;
      cases.push([{ extraEnv: [{ name, value: 'x' }] }, new RegExp(message)]);
    }
    for (const [props, message] of cases) {
      assert.throws(
        () => synthesize(props),
        (e: unknown) => e instanceof EchoperatorPropsError && message.test(e.message),
        message.source,
      );
    }
    // What is left to the user: a setting without a values key, and a label of their own.
    const d = deployment(synthesize({ extraEnv: [{ name: 'WORK_QUEUE_ORDER', value: 'fifo' }], podLabels: { team: 'a' } }).objects);
    assert.equal(d.spec!.template.metadata!.labels!.team, 'a');
  });
});
