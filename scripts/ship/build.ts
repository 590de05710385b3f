/**
 * `npm run build`: the operator as ONE minified CommonJS file, dist/bundle/echoperator.js (plus
 * its source map; and start.js, the container image's entrypoint that runs it from a code cache,
 * src/cachedstart.ts), which runs with no node_modules on Node 22, 24 and 26, on Deno 2, inside the
 * container image and, unchanged, as the main script of the single executable (`npm run build:sea`).
 *
 * Why CommonJS and not ESM: a Node single executable only runs a CommonJS main script; a CJS bundle
 * needs no createRequire banner for the `require('node:...')` calls of the CJS packages inside it;
 * and in the image (/app/echoperator.js, no package.json beside it) every Node version reads a .js
 * file as CJS. Inside this repository the root package.json says "type": "module", so the build
 * writes a one-line dist/bundle/package.json ({"type": "commonjs"}), which Node and Deno both honour.
 *
 * Of client-node, the bundle holds KubeConfig and what it loads on first use (see
 * bundle-clientnode.ts: ~415 KiB instead of ~870, and 12 MiB less RSS idle).
 *
 * What the bundle leaves out (see STUBS): client-node's optional native helpers (bufferutil,
 * utf-8-validate) and supports-color become a stub that throws MODULE_NOT_FOUND, which their
 * guarded `try { require(...) } catch {}` already expects, so the bundle never looks in the file
 * system for a module (a single executable could not load one).
 *
 * The version comes from package.json, or ECHOPERATOR_VERSION for a release build, through the
 * `__ECHOPERATOR_VERSION__` define (see src/version.ts). dist/manifests/ belongs to cdk8s: never
 * written here.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import * as esbuild from 'esbuild';
import { clientNodeKubeConfigOnly } from './bundle-clientnode.js';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const BUNDLE_DIR = resolve(ROOT, 'dist/bundle');
export const BUNDLE = resolve(BUNDLE_DIR, 'echoperator.js');
/** The container image's entrypoint, which runs the bundle from its code cache (src/cachedstart.ts). */
export const IMAGE_START = resolve(BUNDLE_DIR, 'start.js');
/** The size the bundle must stay under (minified, not gzipped). */
export const MAX_BUNDLE_BYTES = 1.5 * 1024 * 1024;

const missing = (name: string): string =>
  `throw Object.assign(new Error("Cannot find module '${name}' (left out of the echoperator bundle)"), { code: 'MODULE_NOT_FOUND' });`;

/** Modules the bundle replaces, with what it puts in their place. */
const STUBS: Record<string, string> = {
  bufferutil: missing('bufferutil'),
  'utf-8-validate': missing('utf-8-validate'),
  'supports-color': missing('supports-color'),
};

const stubs: esbuild.Plugin = {
  name: 'stubs',
  setup(build) {
    const filter = new RegExp(`^(${Object.keys(STUBS).join('|')})$`);
    build.onResolve({ filter }, (args) => ({ path: args.path, namespace: 'stub' }));
    build.onLoad({ filter: /.*/, namespace: 'stub' }, (args) => ({ loader: 'js', contents: STUBS[args.path] }));
  },
};

/**
 * The project's package.json, as src/version.ts imports it, reduced to its version: the bundle's
 * version comes from the define anyway, and the whole file (scripts, dependency lists) would make
 * the bundle change whenever a script is renamed.
 */
const packageVersionOnly: esbuild.Plugin = {
  name: 'package-version-only',
  setup(build) {
    const packageJson = resolve(ROOT, 'package.json');
    build.onLoad({ filter: /[\\/]package\.json$/ }, (args) =>
      args.path === packageJson ? { loader: 'json', contents: JSON.stringify({ version: packageVersion() }) } : undefined,
    );
  },
};

/** How the operator's code is bundled, for the bundle and for a benchmark of one of its modules. */
export const BUNDLE_OPTIONS = {
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  minify: true,
  plugins: [stubs, clientNodeKubeConfigOnly, packageVersionOnly],
  logLevel: 'warning',
} as const satisfies esbuild.BuildOptions;

export function packageVersion(): string {
  return (JSON.parse(readFileSync(resolve(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
}

export interface BundleResult {
  path: string;
  version: string;
  bytes: number;
  gzipBytes: number;
  ms: number;
  /** esbuild's account of the inputs: which files of which packages the bundle holds (the release's SBOM). */
  metafile: esbuild.Metafile;
}

export async function buildBundle(version = process.env.ECHOPERATOR_VERSION || packageVersion()): Promise<BundleResult> {
  const started = performance.now();
  mkdirSync(BUNDLE_DIR, { recursive: true });
  const { metafile, outputFiles } = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ['src/main.ts'],
    outfile: BUNDLE,
    ...BUNDLE_OPTIONS,
    plugins: [...BUNDLE_OPTIONS.plugins],
    sourcemap: true,
    legalComments: 'eof',
    metafile: true,
    define: { __ECHOPERATOR_VERSION__: JSON.stringify(version) },
    write: false,
  });
  const start = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: ['src/cachedstart.ts'],
    outfile: IMAGE_START,
    ...BUNDLE_OPTIONS,
    plugins: [],
    write: false,
  });
  outputFiles.push(...start.outputFiles);
  // Each file replaced whole by a rename: a process running the previous bundle meanwhile (a test
  // file beside the release's) never finds it missing or half written.
  for (const file of outputFiles) replaceFile(file.path, file.contents);
  replaceFile(resolve(BUNDLE_DIR, 'package.json'), '{"type":"commonjs"}\n');
  const code = readFileSync(BUNDLE);
  const result = {
    path: BUNDLE,
    version,
    bytes: code.length,
    gzipBytes: gzipSync(code, { level: 9 }).length,
    ms: performance.now() - started,
    metafile,
  };
  if (result.bytes >= MAX_BUNDLE_BYTES) throw new Error(`bundle is ${kib(result.bytes)}, over the ${kib(MAX_BUNDLE_BYTES)} budget`);
  return result;
}

function replaceFile(path: string, contents: string | Uint8Array): void {
  const partial = `${path}.partial-${process.pid}`;
  writeFileSync(partial, contents);
  renameSync(partial, path);
}

export function kib(bytes: number): string {
  return bytes >= 1024 * 1024 ? `${(bytes / 1024 / 1024).toFixed(2)} MiB` : `${(bytes / 1024).toFixed(1)} KiB`;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  buildBundle().then(
    (r) => {
      console.log(
        `built ${r.path.slice(ROOT.length + 1)} (version ${r.version}): ${r.bytes} bytes (${kib(r.bytes)}), gzip ${r.gzipBytes} bytes (${kib(r.gzipBytes)}), in ${(r.ms / 1000).toFixed(1)} s`,
      );
    },
    (err: unknown) => {
      console.error(`build failed: ${err instanceof Error ? err.message : String(err)}`);
      process.exit(1);
    },
  );
}
