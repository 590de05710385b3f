/**
 * The Helm chart and `npm run synth` are one install: for every values file under
 * test/fixtures/values/, `helm template echoperator <chart> -n echoperator -f <file>` (real Helm,
 * built from the Go module proxy) and the synth with the same file and createNamespace=false give
 * the same objects, compared parsed, CRDs included (`--include-crds`), with exactly one difference
 * normalized: the app.kubernetes.io/managed-by label (Helm / cdk8s), which says which tool
 * rendered the object. Every file under test/fixtures/values/bad/ is refused by both: Helm through
 * values.schema.json or a `fail` naming the key, never a template error. `helm lint --strict` is
 * clean for the defaults and every good file; a `namespace` that is not the release's, and
 * installCrds: false (Helm's --skip-crds), are refused with the reason.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { synthesize, type Manifest } from '../../infra/chart.js';
import { valuesFromSources } from '../../infra/values.js';
import { ensureHelm } from '../../scripts/ship/helm/tool.js';
import { generateChart } from '../../scripts/ship/helm/generate.js';
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
function synthObjects(files: string[]): Manifest[] {
  const props = valuesFromSources({ files, set: ['createNamespace=false'] }, {});
  return JSON.parse(JSON.stringify(synthesize(props).objects)) as Manifest[];
}

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
      const fromHelm = parseAllDocuments(rendered.stdout)
        .map((d) => d.toJS() as Manifest | null)
        .filter((o): o is Manifest => o !== null);
      const fromSynth = synthObjects(files);
      assert.deepEqual(managedBy(fromHelm), new Set(['Helm']));
      assert.deepEqual(managedBy(fromSynth), new Set(['cdk8s']));
      const h = byIdentity(fromHelm);
      const s = byIdentity(fromSynth);
      assert.deepEqual([...h.keys()].sort(), [...s.keys()].sort(), 'the same objects');
      for (const [id, object] of s) assert.deepEqual(h.get(id), object, id);
    });
  }

  for (const file of yamlFiles(BAD)) {
    await t.test(`refused by both: bad/${file}`, () => {
      const path = join(BAD, file);
      assert.throws(() => synthObjects([path]), Error, 'the synth refuses it');
      const rendered = template([path]);
      assert.notEqual(rendered.status, 0, `helm template accepted bad/${file}`);
      // A refusal with a reason, never a template that broke on the value.
      assert.match(rendered.stderr, /values don't meet the specifications of the schema|execution error at/, rendered.stderr);
      assert.doesNotMatch(rendered.stderr, /error calling|nil pointer|can't evaluate/, rendered.stderr);
    });
  }

  await t.test("a namespace that is not the release's is refused with the reason", () => {
    const rendered = template([], ['--set', 'namespace=elsewhere']);
    assert.notEqual(rendered.status, 0);
    assert.match(rendered.stderr, /namespace is elsewhere but the release's namespace is echoperator/);
  });

  await t.test('installCrds: false, which only --skip-crds can do in Helm, is refused with the way out', () => {
    const rendered = template([], ['--set', 'installCrds=false']);
    assert.notEqual(rendered.status, 0);
    assert.match(rendered.stderr, /install with --skip-crds instead/);
  });

  await t.test('helm lint --strict is clean for the defaults and every good file', () => {
    for (const files of [[], ...good.map(valuesFiles)]) {
      const lint = run(helm, ['lint', '--strict', chart, '-n', NAMESPACE, ...files.flatMap((f) => ['-f', f])]);
      assert.equal(lint.status, 0, `helm lint --strict ${files.join(' ')}:\n${lint.stdout}${lint.stderr}`);
      assert.doesNotMatch(lint.stdout, /\[(WARNING|ERROR)\]/, lint.stdout);
    }
  });
});
