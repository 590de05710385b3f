/**
 * crds/ is generated from src/api and must not drift from it; the synthesized install carries the
 * very same CRDs; every field is described and `kubectl get` shows the Ready condition.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { synthesize } from '../../infra/chart.js';
import { buildCrd, type JSONSchemaProps } from '../../src/api/index.js';
import { renderCrdFiles } from '../../src/api/render.js';
import { CUSTOM_RESOURCES } from '../../src/controllers/index.js';
import { READY_CONDITION } from '../../src/runtime/reconcile/conditions.js';

test('every file in crds/ is exactly what src/api renders, and nothing else is there', () => {
  const rendered = renderCrdFiles(CUSTOM_RESOURCES);
  assert.deepEqual(readdirSync('crds').sort(), rendered.map((f) => f.file).sort());
  for (const { file, content } of rendered) {
    assert.equal(readFileSync(join('crds', file), 'utf8'), content, `crds/${file} is out of date: run \`npm run gen:crds\``);
  }
});

test('scripts/ship/gen/crds.ts --check reports no drift (exit 0)', { timeout: 60_000 }, () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/ship/gen/crds.ts', '--check'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
});

test("the synthesized install carries the same CRDs as crds/, save Helm's keep annotation (crds.keep)", () => {
  const fromFiles = readdirSync('crds')
    .sort()
    .map((f) => parse(readFileSync(join('crds', f), 'utf8')) as unknown);
  const crdsOf = (props: Parameters<typeof synthesize>[0]) =>
    synthesize(props)
      .objects.filter((o) => o.kind === 'CustomResourceDefinition')
      .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  assert.deepEqual(crdsOf({ crds: { keep: false } }), fromFiles);
  const kept = crdsOf({});
  for (const crd of kept) assert.deepEqual(crd.metadata.annotations, { 'helm.sh/resource-policy': 'keep' });
  assert.deepEqual(
    kept.map(({ metadata: { annotations: _kept, ...metadata }, ...rest }) => ({ ...rest, metadata })),
    fromFiles,
  );
});

/** Every property under `schema`, by its path (`status.conditions[].reason`), with its schema. */
function properties(schema: JSONSchemaProps, path = ''): [string, JSONSchemaProps][] {
  const own = Object.entries(schema.properties ?? {}).flatMap(([name, prop]) => {
    const at = path ? `${path}.${name}` : name;
    return [[at, prop] as [string, JSONSchemaProps], ...properties(prop, at)];
  });
  return schema.items ? [...own, ...properties(schema.items, `${path}[]`)] : own;
}

test('every field of every CRD has a description, so `kubectl explain` says something of each, status included', () => {
  for (const kind of CUSTOM_RESOURCES) {
    const schema = buildCrd(kind).spec.versions[0]!.schema.openAPIV3Schema;
    // The API server refuses anything but the type for metadata; kubectl explain reads ObjectMeta's.
    assert.deepEqual(schema.properties!.metadata, { type: 'object' }, `${kind.kind}: metadata`);
    const fields = properties(schema).filter(([path]) => path !== 'metadata');
    assert.ok(
      fields.some(([path]) => path === 'status.conditions[].reason'),
      `${kind.kind}: the walk reaches the conditions' fields`,
    );
    const bare = fields.filter(([, prop]) => !prop.description?.trim()).map(([path]) => path);
    assert.deepEqual(bare, [], `${kind.kind}: fields without a description`);
    assert.ok(schema.description?.trim(), `${kind.kind}: the kind itself has a description`);
  }
});

test("kubectl get shows the Ready condition's status and reason for every kind, beside its own columns", () => {
  const ready = `.status.conditions[?(@.type=="${READY_CONDITION}")]`;
  for (const kind of CUSTOM_RESOURCES) {
    const columns = buildCrd(kind).spec.versions[0]!.additionalPrinterColumns;
    const shown = (name: string) => columns.find((c) => c.name === name);
    assert.deepEqual(
      [shown('Ready'), shown('Reason')].map((c) => [c?.jsonPath, c?.priority ?? 0]),
      [
        [`${ready}.status`, 0],
        [`${ready}.reason`, 0],
      ],
      kind.kind,
    );
    // Age stays the last column, as kubectl's built-in kinds show it.
    assert.equal(columns.at(-1)!.name, 'Age', kind.kind);
  }
});
