/**
 * What reviews used to hope for, checked: the layers import downwards only, and each custom
 * resource's names (group, kind, plural) are written once, in src/api, and derived everywhere else.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { CUSTOM_RESOURCES } from '../../src/controllers/index.js';

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return name.endsWith('.ts') ? [path] : [];
  });
}

function importsOf(file: string): string[] {
  return [...readFileSync(file, 'utf8').matchAll(/^(?:import|export)\b[^;]*?from\s+'([^']+)'/gms)].map((m) => m[1]!);
}

/** The folder under src/ that a relative import from `file` lands in. */
function layerOf(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = relative('src', join(file, '..', specifier));
  return target.startsWith('..') ? undefined : target.split('/')[0];
}

test('src/runtime imports nothing from observability/, api/, controllers/ or manager/', () => {
  const forbidden = new Set(['observability', 'api', 'controllers', 'manager', 'config']);
  const found = tsFiles('src/runtime').flatMap((f) =>
    importsOf(f)
      .filter((s) => forbidden.has(layerOf(f, s) ?? ''))
      .map((s) => `${f}: ${s}`),
  );
  assert.deepEqual(found, []);
});

test('src/kube and src/api import nothing from the layers above them', () => {
  const above = new Set(['runtime', 'observability', 'controllers', 'manager', 'config']);
  const found = [...tsFiles('src/kube'), ...tsFiles('src/api')].flatMap((f) =>
    importsOf(f)
      .filter((s) => above.has(layerOf(f, s) ?? '') || (f.startsWith('src/kube') && layerOf(f, s) === 'api'))
      .map((s) => `${f}: ${s}`),
  );
  assert.deepEqual(found, []);
});

test("a custom resource's group, kinds and plural are written only in src/api", () => {
  const names = new Set<string>();
  for (const k of CUSTOM_RESOURCES) for (const n of [k.group, k.kind, k.resource]) names.add(n);
  const alternatives = [...names].map((n) => n.replace(/\./g, '\\.')).join('|');
  // As a string of its own or the start of one ('echos', "mmontes.io/..."), not inside prose.
  const literal = new RegExp(`['"\`](?:${alternatives})(?:['"\`/.]|$)`);
  const sources = [...tsFiles('src'), ...tsFiles('infra'), 'scripts/demo.ts'].filter((f) => !f.startsWith('src/api/'));
  const found: string[] = [];
  for (const file of sources) {
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        const code = line.trim();
        if (code.startsWith('*') || code.startsWith('//') || code.startsWith('/*')) return;
        if (literal.test(code)) found.push(`${file}:${i + 1}: ${code}`);
      });
  }
  assert.deepEqual(found, [], 'derive these from src/api (e.g. ECHOS.resource, crdName(ECHOS), apiVersionOf(ECHOS))');
});
