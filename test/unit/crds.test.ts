/**
 * crds/ is generated from src/api and must not drift from it; the synthesized install carries the
 * very same CRDs.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { synthesize } from '../../infra/chart.js';
import { renderCrdFiles } from '../../src/api/render.js';
import { CUSTOM_RESOURCES } from '../../src/controllers/index.js';

test('every file in crds/ is exactly what src/api renders, and nothing else is there', () => {
  const rendered = renderCrdFiles(CUSTOM_RESOURCES);
  assert.deepEqual(readdirSync('crds').sort(), rendered.map((f) => f.file).sort());
  for (const { file, content } of rendered) {
    assert.equal(readFileSync(join('crds', file), 'utf8'), content, `crds/${file} is out of date: run \`npm run gen:crds\``);
  }
});

test('scripts/gen-crds.ts --check reports no drift (exit 0)', { timeout: 60_000 }, () => {
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/gen-crds.ts', '--check'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
});

test('the synthesized install carries the same CRDs as crds/', () => {
  const fromFiles = readdirSync('crds')
    .sort()
    .map((f) => parse(readFileSync(join('crds', f), 'utf8')) as unknown);
  const synthesized = synthesize()
    .objects.filter((o) => o.kind === 'CustomResourceDefinition')
    .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
  assert.deepEqual(synthesized, fromFiles);
});
