/**
 * What reviews used to hope for, checked: the layers import downwards only, no module imports
 * itself through others (src, infra, scripts, test), and each custom resource's names (group,
 * kind, plural) are written once, in src/api, and derived everywhere else.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { test } from 'node:test';
import { CUSTOM_RESOURCES } from '../../src/controllers/index.js';
import { scratchDir } from '../support/scratch.js';

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

/** Every module a file names: static imports and re-exports (type-only too), side-effect and dynamic imports. */
function allImportsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  const dynamicOrBare = [...text.matchAll(/(?:^import\s+|\bimport\()'([^']+)'/gm)].map((m) => m[1]!);
  return [...importsOf(file), ...dynamicOrBare];
}

/** The file a relative specifier names (`./x.js` is ./x.ts), or undefined for a package or a file that is not TypeScript. */
function resolveImport(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = join(file, '..', specifier);
  const candidates = [target.replace(/\.js$/, '.ts'), target, join(target, 'index.ts')];
  return candidates.find((c) => c.endsWith('.ts') && existsSync(c));
}

/** Each import cycle among `files`, once, as `a -> b -> a`. */
function importCycles(files: string[], importsOfFile: (file: string) => string[]): string[] {
  const edges = new Map(files.map((f) => [f, [...new Set(importsOfFile(f))].sort()]));
  const cycles = new Set<string>();
  const state = new Map<string, 'open' | 'done'>();
  const path: string[] = [];
  const visit = (f: string): void => {
    state.set(f, 'open');
    path.push(f);
    for (const g of edges.get(f) ?? []) {
      if (state.get(g) === 'open') {
        const cycle = path.slice(path.indexOf(g));
        // The same cycle found from another start: name it from its smallest file.
        const start = cycle.indexOf([...cycle].sort()[0]!);
        const canonical = [...cycle.slice(start), ...cycle.slice(0, start)];
        cycles.add([...canonical, canonical[0]].join(' -> '));
      } else if (!state.has(g)) visit(g);
    }
    path.pop();
    state.set(f, 'done');
  };
  for (const f of [...edges.keys()].sort()) if (!state.has(f)) visit(f);
  return [...cycles];
}

/** The folder under src/ that a relative import from `file` lands in. */
function layerOf(file: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const target = relative('src', join(file, '..', specifier));
  return target.startsWith('..') ? undefined : target.split('/')[0];
}

/** Each import of `files` that `refused(file, layer)` refuses, as `file: specifier`. */
function refusedImports(files: string[], refused: (file: string, layer: string) => boolean): string[] {
  return files.flatMap((f) =>
    importsOf(f)
      .filter((s) => refused(f, layerOf(f, s) ?? ''))
      .map((s) => `${f}: ${s}`),
  );
}

test('src/runtime imports nothing from observability/, api/, controllers/ or manager/', () => {
  const forbidden = new Set(['observability', 'api', 'controllers', 'manager', 'config']);
  assert.deepEqual(
    refusedImports(tsFiles('src/runtime'), (_f, layer) => forbidden.has(layer)),
    [],
  );
});

test('src/manager imports nothing of the app (api/, controllers/, config/, observability/)', () => {
  const app = new Set(['api', 'controllers', 'config', 'observability']);
  assert.deepEqual(
    refusedImports(tsFiles('src/manager'), (_f, layer) => app.has(layer)),
    [],
  );
});

test('src/kube and src/api import nothing from the layers above them', () => {
  const above = new Set(['runtime', 'observability', 'controllers', 'manager', 'config']);
  const files = [...tsFiles('src/kube'), ...tsFiles('src/api')];
  assert.deepEqual(
    refusedImports(files, (f, layer) => above.has(layer) || (f.startsWith('src/kube') && layer === 'api')),
    [],
  );
});

test('no import cycles in src, infra, scripts or test (a cluster add-on plugs in, the cluster does not import it)', () => {
  const files = ['src', 'infra', 'scripts', 'test'].flatMap(tsFiles);
  const local = (f: string): string[] => allImportsOf(f).flatMap((s) => resolveImport(f, s) ?? []);
  assert.deepEqual(importCycles(files, local), []);
});

test('the cycle check finds a cycle through several files, and through a dynamic import', () => {
  const graph: Record<string, string[]> = { a: ['b'], b: ['c'], c: ['a', 'd'], d: [], e: ['e'] };
  assert.deepEqual(
    importCycles(Object.keys(graph), (f) => graph[f]!),
    ['a -> b -> c -> a', 'e -> e'],
  );
  const dir = scratchDir('cycles');
  writeFileSync(join(dir, 'x.ts'), "import type { Y } from './y.js';\nexport type X = Y;\n");
  writeFileSync(join(dir, 'y.ts'), "export type Y = string;\nexport const load = () => import('./x.js');\n");
  const local = (f: string): string[] => allImportsOf(f).flatMap((s) => resolveImport(f, s) ?? []);
  assert.deepEqual(importCycles(tsFiles(dir), local), [`${join(dir, 'x.ts')} -> ${join(dir, 'y.ts')} -> ${join(dir, 'x.ts')}`]);
});

test("a custom resource's group, kinds and plural are written only in src/api", () => {
  const names = new Set<string>();
  for (const k of CUSTOM_RESOURCES) for (const n of [k.group, k.kind, k.resource]) names.add(n);
  const alternatives = [...names].map((n) => n.replace(/\./g, '\\.')).join('|');
  // As a string of its own or the start of one ('echos', "mmontes.io/..."), not inside prose.
  const literal = new RegExp(`['"\`](?:${alternatives})(?:['"\`/.]|$)`);
  const sources = [...tsFiles('src'), ...tsFiles('infra'), 'scripts/testbed/demo.ts'].filter((f) => !f.startsWith('src/api/'));
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
