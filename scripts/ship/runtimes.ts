/**
 * The runtimes the bundle ships for, and how each is started; shared by the distribution tests and
 * `npm run bench:dist`. Each artifact is built here when it is missing or older than its inputs.
 *
 * - Node, each supported release line (NODE_LINES): `node dist/bundle/echoperator.js` with the
 *   official binary from the npm package node-<os>-<arch>, installed on first use into
 *   ~/.cache/echoperator/ (never into the project's dependencies).
 * - Deno 2: the binary of the exact-pinned `deno` devDependency, with the permissions below.
 * - The single executable dist/sea/echoperator (scripts/ship/build-sea.ts).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { BUNDLE, IMAGE_START, ROOT, buildBundle } from './build.js';
import { SEA, buildSea } from './build-sea.js';
import { cacheRoot } from './gobuild.js';

/**
 * The Node release lines that are not end-of-life, each pinned to an exact release: 22 (maintenance
 * LTS), 24 (active LTS) and 26 (current). Node 20 reached its end of life on 2026-04-30. The unit
 * tier (scripts/testbed/test.ts) and the distribution smoke (test/e2e/distribution.test.ts) run on each.
 */
export const NODE_LINES = ['22.23.3', '24.21.0', '26.12.1'] as const;

/**
 * The main line: the image's (the Dockerfile's base, `nodejs24`), on which `npm test` makes its
 * main run, `npm ci` of .ci/run installs, and the demo runs; the other lines run the unit tier after
 * it. scripts/testbed/main-node.sh reads this line's text (it runs before `npm ci`, without tsx):
 * keep it `export const MAIN_NODE_LINE ... = '<version>';`.
 */
export const MAIN_NODE_LINE: (typeof NODE_LINES)[number] = '24.21.0';

/** The major of a Node version ('22.23.3' -> '22'). */
export function nodeMajor(version: string): string {
  return version.replace(/^v/, '').split('.')[0]!;
}

/** The pinned release of a supported line, by its major; undefined when the line is not supported. */
export function nodeLine(major: string): string | undefined {
  return NODE_LINES.find((version) => nodeMajor(version) === major);
}

/**
 * Deno's permissions for the operator, as narrow as they go:
 * - --allow-env: settings come from the environment (and client-node enumerates it);
 * - --allow-sys=hostname: the default HA_NODE_ID and the User-Agent;
 * - --allow-read=<kubeconfig>: only the kubeconfig file (in a pod: the service account directory);
 * - --allow-net: the API server, plus listening on the metrics and health ports. With `net` given
 *   (e.g. ['127.0.0.1:6443', '[::]:8081', '[::]:2112']: the servers listen dual-stack) only those; else any host.
 */
export function denoPermissions(options: { read: string[]; net?: string[] }): string[] {
  return [
    options.net ? `--allow-net=${options.net.join(',')}` : '--allow-net',
    '--allow-env',
    '--allow-sys=hostname',
    ...(options.read.length ? [`--allow-read=${options.read.join(',')}`] : []),
  ];
}

/** The Deno binary of the `deno` npm package (its postinstall links it; else the platform package). */
export function denoBinary(): string {
  const linked = resolve(ROOT, 'node_modules/deno/deno');
  if (existsSync(linked) && statSync(linked).size > 1_000_000) return linked;
  const platform = `${process.platform}-${process.arch}${process.platform === 'linux' ? '-glibc' : ''}`;
  const direct = resolve(ROOT, `node_modules/@deno/${platform}/deno`);
  if (!existsSync(direct)) throw new Error(`no Deno binary for ${platform}: run npm ci`);
  return direct;
}

/**
 * The official binary of Node `version` (one of NODE_LINES), installed from npm on first use into
 * the cache; { reason } when it cannot be installed. Not safe to call for one version from two
 * processes at once the first time: callers that fan out (scripts/testbed/test.ts) install before they do.
 * scripts/testbed/main-node.sh installs MAIN_NODE_LINE the same way, into the same folder.
 */
export function nodeBinary(version: string): { path?: string; reason?: string } {
  const pkg = `node-${process.platform}-${process.arch}`;
  const dir = join(cacheRoot(), `node-v${version}`);
  const bin = join(dir, 'node_modules', pkg, 'bin', 'node');
  if (!existsSync(bin)) {
    const r = spawnSync(
      'npm',
      ['install', '--no-save', '--no-package-lock', '--no-audit', '--no-fund', '--prefix', dir, `${pkg}@${version}`],
      {
        encoding: 'utf8',
        timeout: 300_000,
      },
    );
    if (r.status !== 0 || !existsSync(bin))
      return { reason: `could not install ${pkg}@${version} from npm: ${(r.stderr || String(r.error)).trim().slice(-300)}` };
  }
  return { path: bin };
}

function newestMtime(path: string): number {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(0, ...readdirSync(path).map((name) => newestMtime(join(path, name))));
}

/** Builds the bundle when it is missing or older than src/, the package files or the build script. */
export async function ensureBundle(): Promise<string> {
  const inputs = ['src', 'package.json', 'package-lock.json', 'scripts/ship/build.ts'].map((p) => newestMtime(resolve(ROOT, p)));
  if (!existsSync(BUNDLE) || !existsSync(IMAGE_START) || statSync(BUNDLE).mtimeMs < Math.max(...inputs)) await buildBundle();
  return BUNDLE;
}

/** Builds the single executable when missing or stale (it is cached by the hash of its inputs). */
export async function ensureSea(): Promise<string> {
  await ensureBundle();
  buildSea();
  return SEA;
}
