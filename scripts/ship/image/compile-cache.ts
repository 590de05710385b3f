/**
 * V8's code cache for the bundle, made at build time and shipped in the image, so a container
 * that starts on a read-only root file system skips parsing and compiling the bundle: the image's
 * entrypoint, /app/start.js (src/cachedstart.ts), compiles the bundle with it.
 *
 * Guarantees:
 *  - The same bundle, entrypoint and Node give the same bytes on every build, on every machine:
 *    V8 runs with --predictable (one thread, a fixed hash seed: without it the cache's bytes
 *    change from run to run) and the entrypoint makes the cache under one fixed script name,
 *    wherever the files lie.
 *  - The cache is made by the image's own Node (`runner`: an emulator's argv, for another
 *    architecture's), compiling the bundle without running any of it.
 *  - A Node of another version or architecture refuses the cache, and the entrypoint then
 *    compiles the bundle as if there were none.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { CODE_CACHE_FILE, CODE_CACHE_OUT_ENV } from '../../../src/codecache.js';
import { cacheRoot } from '../gobuild.js';

/** Where the image holds the cache, next to the bundle (src/cachedstart.ts reads it there). */
export const COMPILE_CACHE_DIR = 'app/compile-cache';

export interface CompileCacheFile {
  /** Path inside the image, without a leading slash (under COMPILE_CACHE_DIR). */
  path: string;
  /** The file on this machine (in the project's cache, keyed by Node's, the bundle's and the entrypoint's bytes). */
  source: string;
}

interface BakeInputs {
  /** The image's Node. */
  node: string;
  /** The bundle (the image's /app/echoperator.js). */
  bundle: string;
  /** The entrypoint (the image's /app/start.js). */
  start: string;
  /** An emulator's argv that runs `node`, for another architecture's. */
  runner?: string[];
}

/** The cache file for `bundle` under `node`, made once per set of contents and kept in the project's cache. */
export function compileCacheFiles(opts: BakeInputs): CompileCacheFile[] {
  const hash = createHash('sha256');
  for (const file of [opts.node, opts.bundle, opts.start]) hash.update(readFileSync(file));
  const file = join(cacheRoot(), 'code-cache', hash.digest('hex').slice(0, 16), CODE_CACHE_FILE);
  if (!existsSync(file)) {
    mkdirSync(dirname(file), { recursive: true });
    const partial = `${file}.partial-${process.pid}`;
    bakeCompileCache({ ...opts, into: partial });
    renameSync(partial, file);
  }
  return [{ path: `${COMPILE_CACHE_DIR}/${CODE_CACHE_FILE}`, source: file }];
}

/**
 * Runs the entrypoint beside a copy of the bundle, as the image lays them out, under `node` with
 * --predictable, and writes the cache it makes to `into`.
 */
export function bakeCompileCache(opts: BakeInputs & { into: string }): void {
  const app = mkdtempSync(join(tmpdir(), 'echoperator-code-cache-'));
  try {
    copyFileSync(opts.bundle, join(app, 'echoperator.js'));
    copyFileSync(opts.start, join(app, 'start.js'));
    const argv = [...(opts.runner ?? []), opts.node, '--predictable', join(app, 'start.js')];
    const run = spawnSync(argv[0]!, argv.slice(1), {
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '/usr/bin:/bin', [CODE_CACHE_OUT_ENV]: opts.into },
    });
    if (run.error || run.status !== 0 || !existsSync(opts.into))
      throw new Error(`code cache: ${argv.join(' ')} failed: ${run.error?.message ?? `exit ${run.status}: ${run.stderr.trim()}`}`);
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
}
