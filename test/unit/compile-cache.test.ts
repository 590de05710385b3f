/**
 * The image's compile cache (scripts/ship/image/compile-cache.ts) is made the same, byte for byte,
 * by every build of the same bundle on the same Node: the image's digest depends on it.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { bakeCompileCache, COMPILE_CACHE_DIR } from '../../scripts/ship/image/compile-cache.js';
import { scratchDir } from '../support/scratch.js';

/** A stand-in bundle: enough functions and strings that a cache made from it is not trivial. */
const BUNDLE = `'use strict';
const table = new Map();
for (let i = 0; i < 200; i++) table.set('key-' + i, { i, name: 'entry ' + i });
function render(x) { return JSON.stringify([...table.values()].slice(0, x)); }
if (process.argv.includes('--version')) console.log(render(3).length);
`;

/** Path -> SHA-256 of every file under dir. */
function digests(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (d: string, prefix: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name), `${prefix}${e.name}/`);
      else
        out[`${prefix}${e.name}`] = createHash('sha256')
          .update(readFileSync(join(d, e.name)))
          .digest('hex');
    }
  };
  walk(dir, '');
  return out;
}

test('two builds of one bundle on one Node give the same cache files', () => {
  const dir = scratchDir('compile-cache');
  const bundle = join(dir, 'bundle.js');
  writeFileSync(bundle, BUNDLE);
  const [a, b] = ['a', 'b'].map((n) => {
    const into = join(dir, n);
    bakeCompileCache({ node: process.execPath, bundle, into });
    return digests(into);
  });
  assert.ok(Object.keys(a!).length >= 1, 'Node wrote no cache file');
  assert.deepEqual(a, b);
  // One folder named by Node's version, architecture and V8's flag hash: a plain `node` finds it.
  const [folder] = Object.keys(a!).map((p) => p.split('/')[0]);
  assert.match(folder!, new RegExp(`^${process.version}-${process.arch}-[0-9a-f]+`));
  assert.equal(COMPILE_CACHE_DIR, 'app/compile-cache');
});

test('a bundle that fails is an error naming the command', () => {
  const dir = scratchDir('compile-cache-fail');
  const bundle = join(dir, 'bundle.js');
  writeFileSync(bundle, 'process.exit(3)\n');
  assert.throws(
    () => bakeCompileCache({ node: process.execPath, bundle, into: join(dir, 'out') }),
    /--predictable .*--version failed: exit 3/,
  );
});
