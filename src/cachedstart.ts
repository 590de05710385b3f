/**
 * The container image's entrypoint (/app/start.js): runs the bundle beside it (/app/echoperator.js)
 * from a V8 code cache of the whole bundle, made when the image is built, so a container starts
 * without parsing and compiling the code its start-up runs.
 *
 * Why not Node's own compile cache (NODE_COMPILE_CACHE): Node writes its cache when it compiles a
 * file, so it holds what V8 compiles eagerly, the top level, and not the functions compiled on
 * their first call (measured: the same 200 KB cache whether made by --version, --help or a whole
 * start against a cluster). Here the bundle is compiled with --no-lazy, every function at once,
 * and V8's cached data of that compile (1.5 MB) is what the image ships; at start the same flags
 * let V8 accept it. On the image's Node, spawn -> /readyz took 13 ms less CPU (119 against 132
 * ms, docs/benchmarks.md has the run).
 *
 * Guarantees:
 *  - --no-lazy holds only while the bundle is compiled: lazy again before it runs, so V8's flag
 *    hash is as Node started it and Node's built-in modules keep their own code cache.
 *  - A cache V8 refuses (another Node, another architecture, another bundle) or a missing one
 *    costs only the compile: the bundle runs as without it. NODE_DEBUG=echoperator says which.
 *  - The cache's bytes are a function of the bundle and the Node that makes it (with
 *    --predictable, and under one script name, CACHE_SCRIPT_NAME, wherever the files are), so a
 *    rebuild from the same commit gives the same image digest.
 *
 * With CODE_CACHE_OUT_ENV set to a path, it writes the cache there and exits without running the
 * bundle: the image's build does that. The bundle finds itself as when Node runs it (argv[1],
 * its module, filename and require), so nothing in it knows it was started from here.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import Module, { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { debuglog } from 'node:util';
import { setFlagsFromString } from 'node:v8';
import { Script } from 'node:vm';
import { CODE_CACHE_FILE, CODE_CACHE_OUT_ENV } from './codecache.js';

/** The script name the cache is made under (its bytes record it; V8 accepts it under any name). */
const CACHE_SCRIPT_NAME = '/app/echoperator.js';

const debug = debuglog('echoperator');
/** The folder of this file (the bundle is built as CommonJS, run as `node /app/start.js`). */
const app = dirname(process.argv[1]!);
const bundle = join(app, 'echoperator.js');
const cacheFile = join(app, 'compile-cache', CODE_CACHE_FILE);

/**
 * The bundle compiled as Node compiles a CommonJS module: all of it, under --no-lazy, when
 * `eager`, else as V8 does by default; handed to `use` before the flag is reset: V8 stamps a
 * cache it makes with the flags of that moment, and accepts one only under the same flags.
 */
function compile<T>(filename: string, opts: { eager: boolean; cachedData?: Buffer }, use: (s: Script) => T): T {
  const source = (Module as unknown as { wrap(code: string): string }).wrap(readFileSync(bundle, 'utf8'));
  if (!opts.eager) return use(new Script(source, { filename }));
  setFlagsFromString('--no-lazy');
  try {
    return use(new Script(source, { filename, cachedData: opts.cachedData }));
  } finally {
    setFlagsFromString('--lazy');
  }
}

function readCache(): Buffer | undefined {
  try {
    return readFileSync(cacheFile);
  } catch {
    return undefined;
  }
}

const out = process.env[CODE_CACHE_OUT_ENV];
if (out) {
  writeFileSync(
    out,
    compile(CACHE_SCRIPT_NAME, { eager: true }, (script) => script.createCachedData()),
  );
} else {
  // Without a cache (an image made for another platform has none), the usual lazy compile.
  const cachedData = readCache();
  const script = compile(bundle, { eager: cachedData !== undefined, cachedData }, (s) => s);
  debug(`code cache ${cacheFile}: ${!cachedData ? 'absent' : script.cachedDataRejected ? 'rejected' : 'accepted'}`);
  const main = new Module(bundle);
  main.filename = bundle;
  process.argv[1] = bundle;
  const run = script.runInThisContext() as (...args: unknown[]) => void;
  run.call(main.exports, main.exports, createRequire(bundle), main, bundle, app);
}
