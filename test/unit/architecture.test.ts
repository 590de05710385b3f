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

/**
 * scripts/ has three rooms: ship/ (what ships: builds, release, chart, generators), testbed/ (the
 * local Kubernetes, the demo, the test runner) and lab/ (benchmarks, the fault campaign, studies).
 * Each room may import the rooms before it in that order, never after; the product (src/, infra/)
 * imports none of them, nor test/.
 */
const ROOMS = ['ship', 'testbed', 'lab'] as const;

function roomOf(file: string): string {
  if (file.startsWith('scripts/')) return `scripts/${file.split('/')[1]}`;
  return file.split('/')[0]!;
}

/** Each import among `files` (repository-relative) that crosses the rooms the wrong way, as `file -> target`. */
function roomViolations(files: string[], importsOfFile: (file: string) => string[]): string[] {
  const rank = (room: string): number => ROOMS.indexOf(room.replace('scripts/', '') as (typeof ROOMS)[number]);
  const refused = (from: string, to: string): boolean => {
    if (from === 'src' || from === 'infra') return to.startsWith('scripts') || to === 'test';
    if (!from.startsWith('scripts/')) return false;
    if (to === 'test') return true;
    return to.startsWith('scripts/') && rank(to) > rank(from);
  };
  return files.flatMap((f) => importsOfFile(f).flatMap((t) => (refused(roomOf(f), roomOf(t)) ? [`${f} -> ${t}`] : [])));
}

test('scripts/ is three rooms, ship, testbed and lab, and nothing else', () => {
  const entries = readdirSync('scripts').filter((name) => statSync(join('scripts', name)).isDirectory());
  assert.deepEqual(entries.sort(), [...ROOMS].sort());
});

test('what ships imports neither the test bed nor the lab; the test bed does not import the lab; the product none', () => {
  const files = ['src', 'infra', 'scripts'].flatMap(tsFiles);
  const local = (f: string): string[] => allImportsOf(f).flatMap((s) => resolveImport(f, s) ?? []);
  assert.deepEqual(roomViolations(files, local), []);
});

test('the room check refuses a planted ship -> lab, ship -> testbed, testbed -> lab and src -> scripts import', () => {
  const graph: Record<string, string[]> = {
    'scripts/ship/build.ts': ['scripts/lab/bench/env.ts', 'scripts/ship/errors.ts'],
    'scripts/ship/release.ts': ['scripts/testbed/kubectl.ts'],
    'scripts/testbed/demo.ts': ['scripts/lab/faults/random.ts', 'scripts/ship/build.ts', 'src/api/echo.ts'],
    'scripts/lab/bench/env.ts': ['scripts/testbed/kubectl.ts', 'scripts/ship/build.ts'],
    'src/main.ts': ['scripts/ship/build.ts'],
  };
  assert.deepEqual(
    roomViolations(Object.keys(graph), (f) => graph[f]!),
    [
      'scripts/ship/build.ts -> scripts/lab/bench/env.ts',
      'scripts/ship/release.ts -> scripts/testbed/kubectl.ts',
      'scripts/testbed/demo.ts -> scripts/lab/faults/random.ts',
      'src/main.ts -> scripts/ship/build.ts',
    ],
  );
});
