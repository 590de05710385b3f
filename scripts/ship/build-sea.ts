/**
 * `npm run build:sea`: the operator as a single executable, dist/sea/echoperator: a copy of this
 * Node binary with the CJS bundle (dist/bundle/echoperator.js, built first) injected as a Node
 * single executable application (`node --experimental-sea-config` makes the blob, postject from
 * npm injects it; both work offline). It runs with nothing installed, takes the same flags and
 * environment as the bundle, and weighs about as much as the Node binary (~100 MB).
 *
 * Caching: the executable is rebuilt only when the bundle, the Node binary or the SEA config
 * changed; their hash is kept in dist/sea/echoperator.inputs. `--force` rebuilds anyway.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUNDLE, ROOT, buildBundle, kib } from './build.js';

export const SEA_DIR = resolve(ROOT, 'dist/sea');
export const SEA = resolve(SEA_DIR, 'echoperator');
/** The fuse every official Node binary carries; postject flips it to say a blob is present. */
const FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';

export interface SeaResult {
  path: string;
  bytes: number;
  ms: number;
  cached: boolean;
}

function run(cmd: string, args: string[]): void {
  const r = spawnSync(cmd, args, { cwd: ROOT, encoding: 'utf8' });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal}): ${(r.stderr || r.stdout || String(r.error)).trim()}`);
}

/** Builds the executable from the bundle as it is now (build the bundle first). */
export function buildSea(options: { force?: boolean } = {}): SeaResult {
  const started = performance.now();
  if (!existsSync(BUNDLE)) throw new Error(`${BUNDLE} is missing: run \`npm run build\` first`);
  const config = {
    main: BUNDLE,
    output: resolve(SEA_DIR, 'echoperator.blob'),
    disableExperimentalSEAWarning: true,
    useCodeCache: true,
  };
  const node = process.execPath;
  const hash = createHash('sha256')
    .update(readFileSync(BUNDLE))
    .update(`${node}\0${process.version}\0${statSync(node).size}\0${JSON.stringify(config)}`)
    .digest('hex');
  const stamp = resolve(SEA_DIR, 'echoperator.inputs');
  if (!options.force && existsSync(SEA) && existsSync(stamp) && readFileSync(stamp, 'utf8') === hash) {
    return { path: SEA, bytes: statSync(SEA).size, ms: performance.now() - started, cached: true };
  }
  if (!readFileSync(node).includes(`${FUSE}:0`)) {
    throw new Error(`${node} has no single-executable fuse (a distribution's own Node build?): build with an official Node binary`);
  }
  rmSync(SEA_DIR, { recursive: true, force: true });
  mkdirSync(SEA_DIR, { recursive: true });
  const configPath = resolve(SEA_DIR, 'sea-config.json');
  writeFileSync(configPath, `${JSON.stringify(config, null, 2)}\n`);
  run(node, ['--experimental-sea-config', configPath]);
  copyFileSync(node, SEA);
  chmodSync(SEA, 0o755);
  run(node, [resolve(ROOT, 'node_modules/postject/dist/cli.js'), SEA, 'NODE_SEA_BLOB', config.output, '--sentinel-fuse', FUSE]);
  rmSync(config.output);
  writeFileSync(stamp, hash);
  return { path: SEA, bytes: statSync(SEA).size, ms: performance.now() - started, cached: false };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  (async () => {
    const b = await buildBundle();
    console.log(`built dist/bundle/echoperator.js: ${kib(b.bytes)} (gzip ${kib(b.gzipBytes)}) in ${(b.ms / 1000).toFixed(1)} s`);
    const s = buildSea({ force: process.argv.includes('--force') });
    const what = s.cached ? 'up to date' : `built in ${(s.ms / 1000).toFixed(1)} s`;
    console.log(`single executable dist/sea/echoperator (Node ${process.version}): ${s.bytes} bytes (${kib(s.bytes)}), ${what}`);
  })().catch((err: unknown) => {
    console.error(`build:sea failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  });
}
