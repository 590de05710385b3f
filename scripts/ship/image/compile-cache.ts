/**
 * V8's compile cache for the bundle, made at build time and shipped in the image, so a container
 * that starts on a read-only root file system skips parsing and compiling what the cache holds
 * (Node's module.enableCompileCache, set by the image's NODE_COMPILE_CACHE).
 *
 * Guarantees:
 *  - The same bundle and the same Node give the same bytes on every build, on every machine:
 *    V8 runs with --predictable (one thread, a fixed hash seed: without it the cache's bytes
 *    change from run to run), the bundle is compiled from one fixed path (the cache records the
 *    script's path; a different folder gives different bytes), and the cache is portable
 *    (NODE_COMPILE_CACHE_PORTABLE: its keys are relative to its folder, so it is found under
 *    the image's /app, not only under the path it was made at).
 *  - The cache is made by running the bundle with --version: everything its modules run when
 *    loaded, nothing that depends on a cluster or the clock.
 *  - --predictable leaves V8's flag hash as it is (the cache folder is named by it), so the
 *    image's plain `node /app/echoperator.js` accepts the cache. A Node of another version or
 *    architecture finds no folder of its name and compiles as if there were no cache.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cacheRoot } from '../gobuild.js';

/** Where the image holds the cache, next to the bundle (the Dockerfile's ENV names it). */
export const COMPILE_CACHE_DIR = 'app/compile-cache';

/** The one folder every build compiles the bundle in: the cache records the script's path. */
const WORKSPACE = '/tmp/echoperator-compile-cache';

export interface CompileCacheFile {
  /** Path inside the image, without a leading slash (under COMPILE_CACHE_DIR). */
  path: string;
  /** The file on this machine (in the project's cache, keyed by Node's and the bundle's bytes). */
  source: string;
}

/**
 * The cache files for `bundle` under `node` (the image's own Node; `runner`, an emulator's argv
 * that runs it, for another architecture's), made once per pair of contents and kept in the
 * project's cache.
 */
export function compileCacheFiles(opts: { node: string; bundle: string; runner?: string[] }): CompileCacheFile[] {
  const key = createHash('sha256').update(readFileSync(opts.node)).update(readFileSync(opts.bundle)).digest('hex').slice(0, 16);
  const dir = join(cacheRoot(), 'compile-cache', key);
  if (!existsSync(dir)) {
    const tmp = `${dir}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    bakeCompileCache({ ...opts, into: tmp });
    renameSync(tmp, dir);
  }
  return listTree(dir, COMPILE_CACHE_DIR);
}

/**
 * Runs `node` over the bundle and copies the cache it wrote into `into`. Builds on one machine
 * take turns on WORKSPACE (flock), since its path is part of the bytes.
 */
export function bakeCompileCache(opts: { node: string; bundle: string; runner?: string[]; into: string }): void {
  const lock = `${WORKSPACE}.lock`;
  mkdirSync(WORKSPACE, { recursive: true });
  mkdirSync(dirname(opts.into), { recursive: true });
  const script = `${WORKSPACE}/app/echoperator.js`;
  const cacheDir = `${WORKSPACE}/${COMPILE_CACHE_DIR}`;
  const argv = [...(opts.runner ?? []), opts.node, '--predictable', script, '--version'];
  // One shell under flock: clean the folder, place the bundle, run Node, and copy out what it wrote.
  const run = spawnSync(
    'flock',
    [
      lock,
      'sh',
      '-c',
      'ws=$1 bundle=$2 into=$3 && shift 3 && rm -rf "$ws/app" && mkdir -p "$ws/app" && cp "$bundle" "$ws/app/echoperator.js" && "$@" >/dev/null && cp -R "$ws/app/compile-cache" "$into"',
      'sh',
      WORKSPACE,
      opts.bundle,
      opts.into,
      ...argv,
    ],
    {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', NODE_COMPILE_CACHE: cacheDir, NODE_COMPILE_CACHE_PORTABLE: '1' },
    },
  );
  if (run.error || run.status !== 0)
    throw new Error(`compile cache: ${argv.join(' ')} failed: ${run.error?.message ?? `exit ${run.status}: ${run.stderr.trim()}`}`);
}

/** Every file under `dir`, sorted by path, named `prefix/...`. */
function listTree(dir: string, prefix: string): CompileCacheFile[] {
  const out: CompileCacheFile[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) out.push(...listTree(path, `${prefix}/${entry.name}`));
    else if (entry.isFile()) out.push({ path: `${prefix}/${entry.name}`, source: path });
  }
  return out;
}
