/**
 * The Helm chart and `npm run synth` are one install: for every values file under
 * test/fixtures/values/, `helm template echoperator <chart> -n echoperator -f <file>` (real Helm,
 * built from the Go module proxy) and the synth with the same file and createNamespace=false give
 * the same objects, compared parsed, CRDs included (templates under crds.enabled, with Helm's
 * keep annotation under crds.keep, as the synth writes them), with exactly one difference
 * normalized: the app.kubernetes.io/managed-by label (Helm / cdk8s), which says which tool
 * rendered the object. Every file under test/fixtures/values/bad/ (and the Go chart's values.yaml,
 * and `--set monitoring.enabled=true`) is refused by both, saying as much: a refusal of the
 * templates is the synth's message word for word, every reason at once, reported at
 * templates/validate/values.yaml (not at an unrelated template); one of values.schema.json names
 * the key the synth names. `helm show values` is infra/values.yaml, each comment above its own key,
 * and with every commented key uncommented it renders as the synth does. With
 * `--skip-schema-validation`, a newline and YAML in any string or integer value inject nothing.
 * `helm lint --strict` is clean for the defaults and every good file; a `namespace` that is not
 * the release's is refused with the reason. The chart has no crds/ (which Helm would install once
 * and never upgrade): `helm upgrade` upgrades the CRDs.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse, parseAllDocuments } from 'yaml';
import { synthesize, type Manifest } from '../../infra/chart.js';
import { valuesFromSources } from '../../infra/values.js';
import { ensureHelm } from '../../scripts/ship/helm/tool.js';
import { generateChart } from '../../scripts/ship/helm/generate.js';
import { uncommentKeys, valuesWithPayload } from '../support/chart-values.js';
import { addOnsReady } from '../support/addons.js';

// Built in the background by npm test while other files run: wait for it here, outside any test's timeout.
await addOnsReady(import.meta.url);

const FIXTURES = new URL('../fixtures/values/', import.meta.url).pathname;
const BAD = join(FIXTURES, 'bad');
const GO_CHART_VALUES = new URL('../fixtures/go-chart/values.yaml', import.meta.url).pathname;
const MANAGED_BY = 'app.kubernetes.io/managed-by';
const RELEASE = 'echoperator';
const NAMESPACE = 'echoperator';

/** The -f files of a fixture: the Go chart's overlay goes over the Go chart's own values.yaml. */
function valuesFiles(file: string): string[] {
  return file === 'go-chart-overlay.yaml' ? [GO_CHART_VALUES, join(FIXTURES, file)] : [join(FIXTURES, file)];
}

const yamlFiles = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort();

function run(helm: string, args: string[]): { status: number | null; stdout: string; stderr: string } {
  return spawnSync(helm, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
}

/** What the synth makes of these files (as `npm run synth -- -f ... --set createNamespace=false`). */
function synthObjects(files: string[], set: string[] = []): Manifest[] {
  const props = valuesFromSources({ files, set: ['createNamespace=false', ...set] }, {});
  return JSON.parse(JSON.stringify(synthesize(props).objects)) as Manifest[];
}

/** The synth's refusal of these values, without the `<source>: ` it starts with. */
function synthRefusal(files: string[], set: string[] = []): string {
  try {
    synthObjects(files, set);
  } catch (err) {
    const message = (err as Error).message;
    const source = [...files, '--set'].join(', '); // synthObjects always sets createNamespace
    assert.ok(message.startsWith(`${source}: `), message);
    return message.slice(source.length + 2);
  }
  throw new Error(`the synth accepted ${[...files, ...set].join(' ')}`);
}

/** `resources.requests.cpu` -> `/resources/requests/cpu`, Helm's schema errors' spelling. */
const pointer = (key: string): string =>
  `/${key
    .replace(/\[(\d+)\]/g, '.$1')
    .split('.')
    .join('/')}`;

/** Objects parsed from helm template's output. */
const parsedObjects = (text: string): Manifest[] =>
  parseAllDocuments(text)
    .map((d) => d.toJS() as Manifest | null)
    .filter((o): o is Manifest => o !== null);

/** Objects by kind, namespace and name, the managed-by label set aside. */
function byIdentity(objects: Manifest[]): Map<string, Manifest> {
  const out = new Map<string, Manifest>();
  for (const o of objects) {
    const copy = structuredClone(o);
    delete copy.metadata.labels?.[MANAGED_BY];
    const template = (copy.spec as { template?: { metadata?: { labels?: Record<string, string> } } } | undefined)?.template;
    delete template?.metadata?.labels?.[MANAGED_BY];
    const id = `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;
    assert.ok(!out.has(id), `${id} appears twice`);
    out.set(id, copy);
  }
  return out;
}

function managedBy(objects: Manifest[]): Set<string | undefined> {
  return new Set(objects.filter((o) => o.kind !== 'CustomResourceDefinition').map((o) => o.metadata.labels?.[MANAGED_BY]));
}

test('the Helm chart renders the same objects as the synth, and refuses what it refuses', { timeout: 900_000 }, async (t) => {
  const helm = await ensureHelm((line) => t.diagnostic(line));
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-chart-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const chart = generateChart(join(dir, 'echoperator'));
  const template = (files: string[], extra: string[] = []) =>
    run(helm, ['template', RELEASE, chart, '-n', NAMESPACE, '--include-crds', ...files.flatMap((f) => ['-f', f]), ...extra]);

  const good = yamlFiles(FIXTURES);
  assert.ok(good.length >= 20, `at least 20 equivalence files, found ${good.length}`);
  for (const file of good) {
    await t.test(`equivalent: ${file}`, () => {
      const files = valuesFiles(file);
      const rendered = template(files);
      assert.equal(rendered.status, 0, `helm template failed: ${rendered.stderr}`);
      const fromHelm = parsedObjects(rendered.stdout);
      const fromSynth = synthObjects(files);
      assert.deepEqual(managedBy(fromHelm), new Set(['Helm']));
      assert.deepEqual(managedBy(fromSynth), new Set(['cdk8s']));
      const h = byIdentity(fromHelm);
      const s = byIdentity(fromSynth);
      assert.deepEqual([...h.keys()].sort(), [...s.keys()].sort(), 'the same objects');
      for (const [id, object] of s) assert.deepEqual(h.get(id), object, id);
    });
  }

  const refusals: { name: string; files: string[]; set: string[] }[] = [
    ...yamlFiles(BAD).map((file) => ({ name: `bad/${file}`, files: [join(BAD, file)], set: [] })),
    { name: "the Go chart's values.yaml", files: [GO_CHART_VALUES], set: [] },
    { name: '--set monitoring.enabled=true', files: [], set: ['monitoring.enabled=true'] },
  ];
  for (const { name, files, set } of refusals) {
    await t.test(`refused by both, saying as much: ${name}`, () => {
      const synth = synthRefusal(files, set);
      const rendered = template(
        files,
        set.flatMap((s) => ['--set', s]),
      );
      assert.notEqual(rendered.status, 0, `helm template accepted ${name}`);
      // A refusal with a reason, never a template that broke on the value.
      assert.doesNotMatch(rendered.stderr, /error calling|nil pointer|can't evaluate/, rendered.stderr);
      const templates = /execution error at \(([^:]+):\d+:\d+\): the values are refused: (.*)$/m.exec(rendered.stderr);
      if (templates) {
        // Reported where the values are checked, with the synth's words, every reason at once.
        assert.equal(templates[1], 'echoperator/templates/validate/values.yaml');
        assert.equal(templates[2], synth);
      } else {
        assert.match(rendered.stderr, /values don't meet the specifications of the schema/, rendered.stderr);
        // The schema names the key the synth names first: `at '/numWorkers'`, or `'replicas' not allowed`.
        const key = /^(?:unknown key )?([\w.[\]]+)/.exec(synth)![1]!;
        const leaf = key.split('.').at(-1)!;
        assert.ok(
          rendered.stderr.includes(`at '${pointer(key)}'`) || rendered.stderr.includes(`'${leaf}' not allowed`),
          `helm does not name ${key}: ${rendered.stderr}`,
        );
      }
    });
  }

  await t.test("the Go chart's values.yaml is refused with every reason at once", () => {
    const rendered = template([GO_CHART_VALUES]);
    assert.match(rendered.stderr, /image\.repository mmontes11\/echoperator is the Go echoperator's image/);
    assert.match(rendered.stderr, /or set monitoring\.insecureSkipVerify: true/);
  });

  await t.test('helm show values reads as infra/values.yaml, and every commented key uncommented renders', () => {
    const shown = run(helm, ['show', 'values', chart]);
    assert.equal(shown.status, 0, shown.stderr);
    // (helm show values ends the file with one newline more.)
    const infra = readFileSync(new URL('../../infra/values.yaml', import.meta.url), 'utf8')
      .trimEnd()
      .split('\n');
    const chartLines = shown.stdout.trimEnd().split('\n');
    // The chart's two lines of header, then infra/values.yaml line for line, but for createNamespace.
    const body = chartLines.slice(2);
    assert.equal(body.length, infra.length, shown.stdout);
    const differing = body.flatMap((line, i) => (line === infra[i] ? [] : [`${infra[i]} -> ${line}`]));
    assert.equal(differing.length, 1, differing.join('\n'));
    assert.match(differing[0]!, /^# createNamespace: true .* -> createNamespace: false /);
    const { text, keys } = uncommentKeys(shown.stdout);
    assert.ok(keys >= 25, `uncommented ${keys} keys`);
    const file = join(dir, 'uncommented.yaml');
    writeFileSync(file, text);
    assert.ok(Object.keys(parse(text) as object).length > Object.keys(parse(shown.stdout) as object).length);
    const rendered = template([file]);
    assert.equal(rendered.status, 0, `helm template of the uncommented values: ${rendered.stderr}`);
    const h = byIdentity(parsedObjects(rendered.stdout));
    const s = byIdentity(synthObjects([file]));
    assert.deepEqual([...h.keys()].sort(), [...s.keys()].sort(), 'the same objects');
    for (const [id, object] of s) assert.deepEqual(h.get(id), object, id);
  });

  await t.test('a newline and YAML in any value inject nothing (--skip-schema-validation)', () => {
    const schema = JSON.parse(readFileSync(join(chart, 'values.schema.json'), 'utf8')) as Parameters<typeof valuesWithPayload>[0];
    const payload = 'x\nzinjectedz: 1\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: zinjectedz}\n';
    const cases = valuesWithPayload(schema, payload);
    assert.ok(cases.length >= 50, `${cases.length} values tried`);
    const injected: string[] = [];
    let rendered = 0;
    for (const { key, values } of cases) {
      const file = join(dir, 'payload.json');
      writeFileSync(file, JSON.stringify(values));
      // Over everything.yaml, so that every template renders (monitoring, HA, the network policy).
      const r = template([join(FIXTURES, 'everything.yaml'), file], ['--skip-schema-validation']);
      if (r.status !== 0) {
        // Refused by the templates' checks: nothing rendered. Any other failure (`YAML parse error`)
        // is a value that broke out of its place in the document.
        if (!/the values are refused: /.test(r.stderr)) injected.push(`${key} (${r.stderr.split('\n')[0]})`);
        continue;
      }
      rendered++;
      const found = JSON.stringify(
        parsedObjects(r.stdout).map((o) => (o.kind === 'ConfigMap' && o.metadata.name === 'zinjectedz' ? 'zinjectedz-object' : o)),
      );
      if (/"zinjectedz(-object)?"/.test(found)) injected.push(key);
    }
    t.diagnostic(`${cases.length} values tried, ${rendered} rendered`);
    assert.ok(rendered >= cases.length / 2, `only ${rendered} of ${cases.length} rendered`);
    assert.deepEqual(injected, [], `YAML injected through ${injected.join(', ')}`);
  });

  await t.test("a namespace that is not the release's is refused with the reason", () => {
    const rendered = template([], ['--set', 'namespace=elsewhere']);
    assert.notEqual(rendered.status, 0);
    assert.match(rendered.stderr, /namespace is elsewhere but the release's namespace is echoperator/);
  });

  await t.test('the CRDs are templates, kept by default; crds.enabled=false leaves them out; no crds/', () => {
    assert.ok(!existsSync(join(chart, 'crds')), 'no crds/ folder, which Helm never upgrades');
    const crds = (extra: string[]) => {
      const rendered = template([], extra);
      assert.equal(rendered.status, 0, rendered.stderr);
      return parsedObjects(rendered.stdout).filter((o) => o.kind === 'CustomResourceDefinition');
    };
    const kept = crds([]);
    assert.deepEqual(kept.map((o) => o.metadata.name).sort(), ['echos.mmontes.io', 'scheduledechos.mmontes.io']);
    for (const crd of kept) assert.deepEqual(crd.metadata.annotations, { 'helm.sh/resource-policy': 'keep' });
    for (const crd of crds(['--set', 'crds.keep=false'])) assert.equal(crd.metadata.annotations, undefined);
    assert.deepEqual(crds(['--set', 'crds.enabled=false']), []);
  });

  await t.test('helm lint --strict is clean for the defaults and every good file', () => {
    for (const files of [[], ...good.map(valuesFiles)]) {
      const lint = run(helm, ['lint', '--strict', chart, '-n', NAMESPACE, ...files.flatMap((f) => ['-f', f])]);
      assert.equal(lint.status, 0, `helm lint --strict ${files.join(' ')}:\n${lint.stdout}${lint.stderr}`);
      assert.doesNotMatch(lint.stdout, /\[(WARNING|ERROR)\]/, lint.stdout);
    }
  });
});
