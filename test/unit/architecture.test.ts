/**
 * What reviews used to hope for, checked: every folder of src/ is a layer that imports downwards
 * only, the rest of src/ reaches the runtime (kube/, runtime/, manager/) only through its surface
 * (src/runtime/index.ts), no module imports itself through others (src, infra, scripts, test), and
 * each custom resource's names (group, kind, plural) are written once, in src/api, and derived
 * everywhere else.
 */
import assert from 'node:assert/strict';
import { cpSync, existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
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

/** The runtime's surface: the one file through which the rest of src/ imports kube/, runtime/ and manager/. */
const SURFACE = 'src/runtime/index.ts';
/** The runtime's test kit, a surface of its own (src/runtime/testing/index.ts) for tests only. */
const TEST_KIT = 'src/runtime/testing/';

/**
 * The layers of src/, bottom up, each with the layers it may import besides itself: imports run
 * downwards only. kube/, runtime/ and manager/ are the runtime, generic (they never name the
 * application); the rest of src/ reaches them only through the surface (runtime/index.ts), which
 * nothing inside them imports. The test kit is for tests: nothing of src/ but itself imports it.
 */
const LAYERS: Record<string, readonly string[]> = {
  'version.ts': [],
  'v8flags.ts': [],
  'codecache.ts': [],
  'cachedstart.ts': ['codecache.ts'],
  kube: [],
  runtime: ['kube'],
  'runtime/testing': ['kube', 'runtime'],
  manager: ['kube', 'runtime'],
  'runtime/index.ts': ['kube', 'runtime', 'manager'],
  observability: ['runtime/index.ts', 'version.ts'],
  api: ['runtime/index.ts'],
  config: ['runtime/index.ts', 'api', 'observability', 'version.ts'],
  controllers: ['runtime/index.ts', 'api', 'config'],
  'main.ts': ['runtime/index.ts', 'api', 'config', 'controllers', 'observability', 'version.ts', 'v8flags.ts'],
};

/** The layer of a file of src/ (`src/...`): its folder, or the file itself at the top of src/; the surface and the test kit apart from runtime/. */
function layerOf(file: string): string {
  if (file === SURFACE) return 'runtime/index.ts';
  if (file.startsWith(TEST_KIT)) return 'runtime/testing';
  return file.split('/')[1]!;
}

/** src/'s import graph under `root`: each file of src/ (as `src/...`) with the files of src/ it imports, type-only and dynamic imports too. */
function srcGraph(root: string): Map<string, string[]> {
  return new Map(
    tsFiles(join(root, 'src')).map((f) => [
      relative(root, f),
      allImportsOf(f)
        .flatMap((s) => resolveImport(f, s) ?? [])
        .map((t) => relative(root, t))
        .filter((t) => t.startsWith('src/')),
    ]),
  );
}

/** Each import of `graph` that LAYERS refuses, as `file -> imported` (or `file: no layer rule for <layer>`). */
function layerViolations(graph: Map<string, readonly string[]>): string[] {
  return [...graph].flatMap(([file, imported]) => {
    const layer = layerOf(file);
    const may = LAYERS[layer];
    if (!may) return [`${file}: no layer rule for ${layer}`];
    return imported.filter((t) => layerOf(t) !== layer && !may.includes(layerOf(t))).map((t) => `${file} -> ${t}`);
  });
}

const SRC = srcGraph('.');

for (const [layer, may] of Object.entries(LAYERS)) {
  const name = layer.endsWith('.ts') ? `src/${layer}` : `src/${layer}/`;
  test(`${name} imports ${may.length ? `only ${may.join(', ')}` : 'nothing of src/'}`, () => {
    const files = new Map([...SRC].filter(([f]) => layerOf(f) === layer));
    assert.ok(files.size > 0, `no file in ${name}`);
    assert.deepEqual(layerViolations(files), []);
  });
}

test('every file of src/ is in a layer', () => {
  assert.deepEqual(
    [...SRC.keys()].filter((f) => !(layerOf(f) in LAYERS)),
    [],
  );
});

test('the layer check refuses planted imports: upwards, past the surface, into it from within, the test kit, a folder with no rule', () => {
  const planted = new Map<string, string[]>([
    ['src/observability/planted.ts', ['src/controllers/index.ts', 'src/runtime/index.ts']],
    ['src/controllers/planted.ts', ['src/runtime/reconcile/status.ts', 'src/kube/errors.ts', 'src/runtime/index.ts']],
    ['src/runtime/cache/planted.ts', ['src/runtime/index.ts', 'src/manager/manager.ts', 'src/runtime/clock.ts']],
    ['src/main.ts', ['src/manager/manager.ts', 'src/runtime/testing/index.ts']],
    ['src/plugins/planted.ts', []],
  ]);
  assert.deepEqual(layerViolations(planted), [
    'src/observability/planted.ts -> src/controllers/index.ts',
    'src/controllers/planted.ts -> src/runtime/reconcile/status.ts',
    'src/controllers/planted.ts -> src/kube/errors.ts',
    'src/runtime/cache/planted.ts -> src/runtime/index.ts',
    'src/runtime/cache/planted.ts -> src/manager/manager.ts',
    'src/main.ts -> src/manager/manager.ts',
    'src/main.ts -> src/runtime/testing/index.ts',
    'src/plugins/planted.ts: no layer rule for plugins',
  ]);
  // The same, from the files: a copy of src/ with an observability module that imports the app
  // (type-only) and a controller that imports a runtime internal (dynamically).
  const root = scratchDir('layers');
  cpSync('src', join(root, 'src'), { recursive: true });
  writeFileSync(
    join(root, 'src/observability/planted.ts'),
    "import type { Settings } from '../config/index.js';\nexport type S = Settings;\n",
  );
  writeFileSync(join(root, 'src/controllers/planted.ts'), "export const load = () => import('../runtime/reconcile/status.js');\n");
  const before = new Set(layerViolations(SRC));
  assert.deepEqual(
    layerViolations(srcGraph(root))
      .filter((v) => !before.has(v))
      .sort(),
    ['src/controllers/planted.ts -> src/runtime/reconcile/status.ts', 'src/observability/planted.ts -> src/config/index.ts'],
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
