/**
 * The image's code cache (scripts/ship/image/compile-cache.ts) is made the same, byte for byte,
 * by every build of the same bundle on the same Node (the image's digest depends on it), and the
 * image's entrypoint (src/cachedstart.ts) runs the bundle with it, without it, and past a cache
 * V8 refuses.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import * as esbuild from 'esbuild';
import { BUNDLE_OPTIONS, ROOT } from '../../scripts/ship/build.js';
import { bakeCompileCache, COMPILE_CACHE_DIR } from '../../scripts/ship/image/compile-cache.js';
import { CODE_CACHE_FILE } from '../../src/codecache.js';
import { scratchDir } from '../support/scratch.js';

/** A stand-in bundle: enough functions that a cache of them is not trivial; it says how it was started. */
const BUNDLE = `'use strict';
const table = new Map();
for (let i = 0; i < 200; i++) table.set('key-' + i, { i, name: 'entry ' + i });
function render(x) { return JSON.stringify([...table.values()].slice(0, x)); }
console.log(JSON.stringify({ argv: process.argv.slice(1), filename: __filename, main: module.filename, rendered: render(2).length }));
`;

/** The entrypoint as the build makes it, and a stand-in bundle beside it, laid out as in the image. */
async function imageApp(name: string, bundle = BUNDLE): Promise<{ app: string; start: string; bundle: string }> {
  const app = join(scratchDir(name), 'app');
  mkdirSync(join(app, 'compile-cache'), { recursive: true });
  await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ['src/cachedstart.ts'],
    outfile: join(app, 'start.js'),
    ...BUNDLE_OPTIONS,
    plugins: [],
  });
  writeFileSync(join(app, 'echoperator.js'), bundle);
  return { app, start: join(app, 'start.js'), bundle: join(app, 'echoperator.js') };
}

function start(app: string, args: string[] = []): { out: unknown; debug: string } {
  const run = spawnSync(process.execPath, [join(app, 'start.js'), ...args], { encoding: 'utf8', env: { NODE_DEBUG: 'echoperator' } });
  assert.equal(run.status, 0, run.stderr);
  return { out: JSON.parse(run.stdout), debug: run.stderr };
}

test('two builds of one bundle on one Node give the same cache, which the entrypoint runs the bundle with', async () => {
  const { app, start: entry, bundle } = await imageApp('code-cache');
  const [a, b] = ['a', 'b'].map((n) => {
    const into = join(app, '..', `${n}.v8`);
    bakeCompileCache({ node: process.execPath, bundle, start: entry, into });
    return readFileSync(into);
  });
  assert.ok(a!.length > BUNDLE.length, `a cache of ${a!.length} bytes`);
  assert.deepEqual(a, b);
  assert.equal(COMPILE_CACHE_DIR, 'app/compile-cache');

  copyFileSync(join(app, '..', 'a.v8'), join(app, 'compile-cache', CODE_CACHE_FILE));
  const run = start(app, ['--flag']);
  assert.match(run.debug, /code cache \S+echoperator\.js\.v8: accepted/);
  // The bundle finds itself as when Node runs it.
  assert.deepEqual(run.out, { argv: [bundle, '--flag'], filename: bundle, main: bundle, rendered: 51 });
});

test('without a cache, or with one V8 refuses, the entrypoint runs the bundle all the same', async () => {
  const { app } = await imageApp('code-cache-none');
  assert.match(start(app).debug, /: absent/);
  writeFileSync(join(app, 'compile-cache', CODE_CACHE_FILE), 'not a code cache');
  const refused = start(app);
  assert.match(refused.debug, /: rejected/);
  assert.equal((refused.out as { rendered: number }).rendered, 51);
});

test('a bundle that does not compile is an error naming the command', async () => {
  const { start: entry, bundle } = await imageApp('code-cache-fail', 'this is not (javascript\n');
  assert.throws(
    () => bakeCompileCache({ node: process.execPath, bundle, start: entry, into: join(bundle, '..', 'out.v8') }),
    /--predictable \S+start\.js failed: exit 1/,
  );
});
