/**
 * scripts/testbed/main-node.sh, which `npm test`, `npm run demo` and .ci/run go through: its line is
 * MAIN_NODE_LINE, the image's; a machine node of another major gives way to that line's binary in
 * the cache scripts/ship/runtimes.ts installs every line into, first on PATH; a machine node of the main line's major is
 * kept. Against stand-in node and npm commands and a scratch cache: nothing is installed here.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { MAIN_NODE_LINE, NODE_LINES, nodeMajor } from '../../scripts/ship/runtimes.js';
import { scratchDir } from '../support/scratch.js';

const SCRIPT = 'scripts/testbed/main-node.sh';

function script(path: string, body: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(path, `#!/bin/sh\n${body}\n`);
  chmodSync(path, 0o755);
}

/** A folder with a `node` that says it is `version`, and an `npm` that fails, so that an install attempt shows. */
function machine(version: string): string {
  const dir = scratchDir('main-node-machine');
  script(join(dir, 'node'), `echo ${version}`);
  script(join(dir, 'npm'), 'echo "npm: not in this test" >&2; exit 1');
  return dir;
}

/** A cache holding the main line's binary where runtimes.ts installs it; the folder of that binary. */
function cacheWithMainLine(): { cache: string; bin: string } {
  const cache = scratchDir('main-node-cache');
  const bin = join(cache, 'echoperator', `node-v${MAIN_NODE_LINE}`, 'node_modules', `node-${process.platform}-${process.arch}`, 'bin');
  script(join(bin, 'node'), 'echo "cached node $*"');
  return { cache, bin };
}

function run(args: string[], pathFirst: string, cache: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(SCRIPT, args, {
    encoding: 'utf8',
    env: { ...process.env, PATH: `${pathFirst}:${process.env.PATH}`, XDG_CACHE_HOME: cache },
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test("the main line is one of the supported lines and the image's: the Dockerfile's base", () => {
  assert.ok((NODE_LINES as readonly string[]).includes(MAIN_NODE_LINE));
  const base = /^FROM \S*nodejs(\d+)\S*/gm;
  const finalBase = [...readFileSync('Dockerfile', 'utf8').matchAll(base)].at(-1)?.[1];
  assert.equal(finalBase, nodeMajor(MAIN_NODE_LINE));
  const r = spawnSync(SCRIPT, ['--version'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `${MAIN_NODE_LINE}\n`, 'the script reads MAIN_NODE_LINE from scripts/ship/runtimes.ts');
});

test("on a machine node of another major, the command runs with the cached main line's node first on PATH", () => {
  const { cache, bin } = cacheWithMainLine();
  const old = machine('20.19.5');
  const r = run(['sh', '-c', 'command -v node; node --version'], old, cache);
  assert.equal(r.status, 0, r.stderr);
  assert.equal(r.stdout, `${join(bin, 'node')}\ncached node --version\n`);
  assert.equal(r.stderr, '', 'found in the cache: nothing installed, nothing said');
  const path = run(['--path'], old, cache);
  assert.deepEqual([path.status, path.stdout], [0, `${bin}\n`]);
});

test("on a machine node of the main line's major, that node is kept", () => {
  const { cache } = cacheWithMainLine();
  const same = machine(`${nodeMajor(MAIN_NODE_LINE)}.1.0`);
  const r = run(['--path'], same, cache);
  assert.deepEqual([r.status, r.stdout, r.stderr], [0, `${same}\n`, '']);
});

test('a missing binary is installed from npm, and a failed install stops the command, saying so', () => {
  const cache = scratchDir('main-node-empty-cache');
  const r = run(['sh', '-c', 'echo ran'], machine('20.19.5'), cache);
  assert.equal(r.status, 1);
  assert.equal(r.stdout, '', 'the command did not run');
  assert.match(
    r.stderr,
    new RegExp(
      `Node 20\\.19\\.5 is not the main line's major; installing node-${process.platform}-${process.arch}@${MAIN_NODE_LINE} from npm`,
    ),
  );
  assert.match(r.stderr, /npm: not in this test/);
  const left = spawnSync('find', [cache, '-mindepth', '2'], { encoding: 'utf8' }).stdout;
  assert.equal(left, '', 'no half install left in the cache');
});

test('no arguments: the usage', () => {
  const r = spawnSync(SCRIPT, [], { encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(r.stderr, /usage: .*main-node\.sh COMMAND \[ARG\.\.\.\] \| --path \| --version/);
});
