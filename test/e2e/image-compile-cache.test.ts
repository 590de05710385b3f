/**
 * The operator image's code cache (scripts/ship/image/compile-cache.ts) is made the same by a
 * build that makes it anew, and the image's Entrypoint (src/cachedstart.ts, on the image's own
 * Node, with its Env) runs the bundle with it. The image is the host platform's, from the lock's
 * packages and Node.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { bakeCompileCache, COMPILE_CACHE_DIR } from '../../scripts/ship/image/compile-cache.js';
import { NODE_PATH } from '../../scripts/ship/image/base.js';
import { operatorImage } from '../../scripts/ship/image/operator.js';
import { imageEntrypointArgv, materializeImage } from '../../scripts/testbed/image-rootfs.js';

const sha = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

test("the image's entrypoint runs the bundle with the image's code cache, which a fresh build makes byte for byte", async (t) => {
  const spec = await operatorImage(undefined, () => undefined);
  const cache = spec.entries.filter((e) => e.type === 'file' && e.path.startsWith(`${COMPILE_CACHE_DIR}/`));
  assert.ok(cache.length >= 1, `the image has no file under /${COMPILE_CACHE_DIR}`);

  const dir = mkdtempSync(join(tmpdir(), 'image-compile-cache-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  // Made anew (not from the project's cache): the same files, the same bytes.
  const node = spec.entries.find((e) => e.path === NODE_PATH)!.source!;
  const bundle = spec.entries.find((e) => e.path === 'app/echoperator.js')!.source!;
  const start = spec.entries.find((e) => e.path === 'app/start.js')!.source!;
  assert.equal(cache.length, 1, cache.map((e) => e.path).join(', '));
  bakeCompileCache({ node, bundle, start, into: join(dir, 'again') });
  assert.equal(sha(join(dir, 'again')), sha(cache[0]!.source!));

  const root = join(dir, 'root');
  materializeImage(spec, root);
  const [program, ...args] = imageEntrypointArgv(spec, root);
  const run = spawnSync(program!, [...args, '--version'], { encoding: 'utf8', env: { NODE_DEBUG: 'echoperator' } });
  assert.equal(run.status, 0, run.stderr);
  assert.match(run.stdout, /^\d+\.\d+\.\d+/m);
  assert.match(run.stderr, /code cache \S+\/app\/compile-cache\/echoperator\.js\.v8: accepted/);
});
