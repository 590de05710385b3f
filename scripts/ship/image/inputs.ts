/**
 * The image's inputs on disk, each checked against the lock before use: a Debian package is
 * fetched by name, version and architecture with `apt-get download` and kept only when its
 * SHA-256 and size are the lock's, then unpacked with `dpkg-deb -x` (its files) and `dpkg-deb -e`
 * (its control files, for the package database); Node's npm package is fetched with `npm pack`
 * and kept only when its integrity is the lock's. All under the per-user cache
 * (~/.cache/echoperator/image-inputs), content-addressed (a .deb by its SHA-256, Node by its
 * integrity), written to a temporary name and renamed into place, so a cached input is a checked
 * one, and a machine that fetched an input once keeps it when the archive no longer serves it.
 *
 * resolveInputs decides, before anything is fetched, what a build uses for a locked package that
 * is not cached (resolve.ts): apt is asked only then, and only about those packages.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { aptUpdate, ensureForeignArchitecture } from '../apt.js';
import { cacheRoot } from '../gobuild.js';
import { parsePrintUris, parseStanzas } from './apt-lists.js';
import type { ImageLock, LockedDeb, LockedNode, Platform } from './lock.js';
import { debSpec, resolveLock, REFRESH_COMMAND, type DebAvailability, type InputsPolicy, type ResolvedLock } from './resolve.js';

const inputsDir = (): string => join(cacheRoot(), 'image-inputs');

function run(command: string, args: string[], cwd?: string): string {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 16 << 20, timeout: 600_000 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${(r.stderr || r.error?.message || '').trim().slice(-600)}`);
  return r.stdout;
}

const sha256Of = (path: string): string => createHash('sha256').update(readFileSync(path)).digest('hex');

/** Renames `partial` to `final` unless another process put `final` there first. */
function settle(partial: string, final: string): void {
  if (existsSync(final)) rmSync(partial, { recursive: true, force: true });
  else renameSync(partial, final);
}

/** Where the cache keeps a .deb: by its SHA-256. */
const debPath = (deb: LockedDeb): string => join(inputsDir(), 'debs', 'sha256', `${deb.sha256}.deb`);
/** Where the cache keeps a package's unpacked files and control files. */
const unpackedPath = (deb: LockedDeb): string => join(inputsDir(), 'unpacked', deb.sha256.slice(0, 32));

/** Whether the cache can build with this package without apt: its .deb or its unpacked files. */
export const isDebCached = (deb: LockedDeb): boolean => existsSync(unpackedPath(deb)) || existsSync(debPath(deb));

/** The .deb, checked: from the cache, else from apt. */
export function fetchDeb(deb: LockedDeb): string {
  const path = debPath(deb);
  if (existsSync(path)) return path;
  const dir = join(inputsDir(), 'debs');
  mkdirSync(join(dir, 'sha256'), { recursive: true });
  const scratch = mkdtempSync(join(dir, '.download-'));
  try {
    const spec = `${debSpec(deb)}=${deb.version}`;
    try {
      run('apt-get', ['download', spec], scratch);
    } catch (err) {
      throw new Error(
        `could not fetch ${spec} with apt (${err instanceof Error ? err.message : String(err)}). ` +
          `If the archive no longer serves it, the lock needs refreshing: \`${REFRESH_COMMAND}\`.`,
      );
    }
    const got = join(scratch, deb.filename);
    if (!existsSync(got))
      throw new Error(`apt-get download ${spec} wrote ${readdirSync(scratch).join(', ') || 'nothing'}, not ${deb.filename}`);
    const sum = sha256Of(got);
    if (sum !== deb.sha256 || statSync(got).size !== deb.size)
      throw new Error(`${deb.filename}: SHA-256 ${sum} (${statSync(got).size} bytes), the lock says ${deb.sha256} (${deb.size} bytes)`);
    settle(got, path);
    return path;
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

/** What apt's lists offer for each spec (`libc6:arm64`, `tzdata`): every downloadable version, the candidate first. */
function servedByApt(specs: string[]): Map<string, LockedDeb[]> {
  const served = new Map<string, LockedDeb[]>(specs.map((s) => [s, []]));
  if (!specs.length) return served;
  const show = (args: string[]) =>
    parseStanzas(spawnSync('apt-cache', ['show', ...args, ...specs], { encoding: 'utf8', maxBuffer: 64 << 20 }).stdout ?? '');
  const specOf = (p: { name: string; architecture: string }) =>
    specs.find((s) => s === `${p.name}:${p.architecture}` || (s === p.name && p.architecture === 'all'));
  const candidates = show(['--no-all-versions']);
  for (const stanza of show([])) {
    const spec = specOf(stanza);
    // Installed-only versions (dpkg's status, no Filename) cannot be downloaded.
    if (!spec || !stanza.filename || !stanza.sha256) continue;
    const isCandidate = candidates.some(
      (c) => c.name === stanza.name && c.architecture === stanza.architecture && c.version === stanza.version,
    );
    const deb: LockedDeb = {
      name: stanza.name,
      version: stanza.version,
      architecture: stanza.architecture as LockedDeb['architecture'],
      sha256: stanza.sha256,
      size: stanza.size,
      filename: stanza.filename.split('/').pop()!,
      url: '',
    };
    const list = served.get(spec)!;
    if (isCandidate) list.unshift(deb);
    else list.push(deb);
  }
  return served;
}

/**
 * The archive URL of each deb, and its file name as `apt-get download` writes it (an epoch's `:`
 * escaped, unlike the pool's name): apt-get download --print-uris, nothing downloaded.
 */
function withUrls(debs: LockedDeb[]): LockedDeb[] {
  if (!debs.length) return debs;
  const uris = run('apt-get', ['download', '--print-uris', ...debs.map((d) => `${debSpec(d)}=${d.version}`)])
    .split('\n')
    .filter((l) => l.startsWith("'"))
    .map(parsePrintUris);
  return debs.map((d) => {
    const uri = uris.find((u) => u.sha256 === d.sha256);
    return uri ? { ...d, url: uri.url, filename: uri.filename } : d;
  });
}

/**
 * The lock a build of `platforms` uses, under `policy` (resolve.ts): cached packages as locked
 * without asking apt; for the others, apt's lists (the architecture added when missing, the lists
 * updated), then chooseDeb. Prints each re-resolved package loudly.
 */
export function resolveInputs(
  lock: ImageLock,
  platforms: readonly Platform[],
  policy: InputsPolicy,
  log: (line: string) => void,
): ResolvedLock {
  const wanted = lock.packages.filter((d) => d.architecture === 'all' || platforms.includes(d.architecture));
  const uncached = wanted.filter((d) => !isDebCached(d));
  if (!uncached.length) return { lock, warnings: [] };
  for (const platform of platforms) if (uncached.some((d) => d.architecture === platform)) ensureForeignArchitecture(platform, log);
  // apt's lists may predate the archive's last release (or be absent, on a fresh machine): a
  // version they list may be gone already. Ask anew, once, before choosing.
  if (process.getuid?.() === 0) aptUpdate(log);
  const served = servedByApt([...new Set(uncached.map(debSpec))]);
  const known = new Map<LockedDeb, DebAvailability>(uncached.map((d) => [d, { cached: false, served: served.get(debSpec(d))! }]));
  const resolved = resolveLock(lock, (d) => known.get(d), policy);
  const urls = withUrls(resolved.lock.packages.filter((d) => !d.url));
  resolved.lock.packages = resolved.lock.packages.map((d) => urls.find((u) => u.sha256 === d.sha256) ?? d);
  for (const warning of resolved.warnings) log(`WARNING: ${warning}`);
  return resolved;
}

export interface UnpackedDeb {
  /** The package's files, as `dpkg-deb -x` lays them out. */
  data: string;
  /** Its control files (control, md5sums, ...), as `dpkg-deb -e` writes them. */
  control: string;
}

/** The package unpacked into the cache (once per SHA-256). */
export function unpackDeb(deb: LockedDeb): UnpackedDeb {
  const final = unpackedPath(deb);
  const result = { data: join(final, 'data'), control: join(final, 'control') };
  if (existsSync(final)) return result;
  const path = fetchDeb(deb);
  mkdirSync(join(inputsDir(), 'unpacked'), { recursive: true });
  const partial = mkdtempSync(`${final}.partial-`);
  try {
    run('dpkg-deb', ['-x', path, join(partial, 'data')]);
    run('dpkg-deb', ['-e', path, join(partial, 'control')]);
    settle(partial, final);
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  return result;
}

/** npm's integrity string (`sha512-<base64>`) of a file. */
export const integrityOf = (path: string): string => `sha512-${createHash('sha512').update(readFileSync(path)).digest('base64')}`;

export interface UnpackedNode {
  /** bin/node */
  binary: string;
  /** Node's LICENSE, shipped beside it. */
  license: string;
  /** The npm tarball it came from, and that tarball's checked integrity. */
  tarball: string;
}

/** Node's npm package for one platform, checked and unpacked into the cache. */
export function fetchNode(node: LockedNode): UnpackedNode {
  const final = join(
    inputsDir(),
    'node',
    `${node.package}-${node.version}-${createHash('sha256').update(node.integrity).digest('hex').slice(0, 12)}`,
  );
  const result = {
    binary: join(final, 'package', 'bin', 'node'),
    license: join(final, 'package', 'LICENSE'),
    tarball: join(final, 'package.tgz'),
  };
  if (existsSync(final)) return result;
  mkdirSync(join(inputsDir(), 'node'), { recursive: true });
  const partial = mkdtempSync(`${final}.partial-`);
  try {
    const packed = JSON.parse(run('npm', ['pack', '--json', '--pack-destination', partial, `${node.package}@${node.version}`])) as {
      filename: string;
    }[];
    const tgz = join(partial, packed[0]!.filename);
    const integrity = integrityOf(tgz);
    if (integrity !== node.integrity)
      throw new Error(`${node.package}@${node.version}: integrity ${integrity}, the lock says ${node.integrity}`);
    renameSync(tgz, join(partial, 'package.tgz'));
    run('tar', ['-xzf', 'package.tgz', 'package/bin/node', 'package/LICENSE'], partial);
    settle(partial, final);
  } finally {
    rmSync(partial, { recursive: true, force: true });
  }
  return result;
}
