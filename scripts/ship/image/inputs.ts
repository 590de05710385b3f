/**
 * The image's inputs on disk, each checked against the lock before use: a Debian package is
 * fetched by name, version and architecture with `apt-get download` and kept only when its
 * SHA-256 and size are the lock's, then unpacked with `dpkg-deb -x` (its files) and `dpkg-deb -e`
 * (its control files, for the package database); Node's npm package is fetched with `npm pack`
 * and kept only when its integrity is the lock's. All under the per-user cache
 * (~/.cache/echoperator/image-inputs), keyed by the checksums, written to a temporary name and
 * renamed into place, so a cached input is a checked one.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from '../gobuild.js';
import type { LockedDeb, LockedNode } from './lock.js';

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

/** The .deb, checked: from the cache, else from apt. */
export function fetchDeb(deb: LockedDeb): string {
  const dir = join(inputsDir(), 'debs');
  const path = join(dir, deb.filename);
  if (existsSync(path) && sha256Of(path) === deb.sha256) return path;
  mkdirSync(dir, { recursive: true });
  const scratch = mkdtempSync(join(dir, '.download-'));
  try {
    const spec = deb.architecture === 'all' ? `${deb.name}=${deb.version}` : `${deb.name}:${deb.architecture}=${deb.version}`;
    try {
      run('apt-get', ['download', spec], scratch);
    } catch (err) {
      throw new Error(
        `could not fetch ${spec} with apt (${err instanceof Error ? err.message : String(err)}). ` +
          `For arm64: \`dpkg --add-architecture arm64 && apt-get update\`. A version the archive no longer serves ` +
          `needs a new lock: \`npm run image:lock\`.`,
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

export interface UnpackedDeb {
  /** The package's files, as `dpkg-deb -x` lays them out. */
  data: string;
  /** Its control files (control, md5sums, ...), as `dpkg-deb -e` writes them. */
  control: string;
}

/** The package unpacked into the cache (once per SHA-256). */
export function unpackDeb(deb: LockedDeb): UnpackedDeb {
  const final = join(inputsDir(), 'unpacked', deb.sha256.slice(0, 32));
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
