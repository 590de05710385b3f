/**
 * `npm run image:lock`: rewrites scripts/ship/image/lock.json from what this machine's apt and the
 * npm registry serve today: for each base package and platform, apt's candidate version with its
 * archive URL, size and SHA-256 (`apt-get download --print-uris`, which downloads nothing), and
 * for Node, the pinned release of the Dockerfile base's line (runtimes.ts NODE_LINES) with npm's
 * tarball integrity for each platform's package. Review the diff, then commit it: the release
 * builds from the committed lock only.
 *
 * A platform apt does not serve yet is added first (`dpkg --add-architecture arm64`, `apt-get
 * update`: scripts/ship/apt.ts), so it runs as root.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureForeignArchitecture } from '../apt.js';
import { ROOT } from '../build.js';
import { nodeLine } from '../runtimes.js';
import { parsePrintUris, parseStanzas } from './apt-lists.js';
import { parseFinalStage } from './dockerfile.js';
import { BASE_PACKAGES, LOCK_FILE, NODE_PACKAGES, parseLock, PLATFORMS, type ImageLock, type LockedDeb } from './lock.js';

function run(command: string, args: string[]): string {
  const r = spawnSync(command, args, { encoding: 'utf8', maxBuffer: 16 << 20, timeout: 300_000 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${(r.stderr || r.error?.message || '').trim()}`);
  return r.stdout;
}

/**
 * Each base package's candidate for each platform: three apt calls in all (apt is slow to start):
 * which packages are architecture-independent, the candidates of the others per platform, then
 * every .deb's URI, size and SHA-256.
 */
function candidates(): LockedDeb[] {
  for (const platform of PLATFORMS) ensureForeignArchitecture(platform, (line) => console.error(line));
  const show = (names: string[]) => parseStanzas(run('apt-cache', ['show', '--no-all-versions', ...names]));
  const native = show(BASE_PACKAGES);
  const independent = native.filter((p) => p.architecture === 'all');
  const perPlatform = BASE_PACKAGES.filter((name) => !independent.some((p) => p.name === name));
  const specific = show(PLATFORMS.flatMap((platform) => perPlatform.map((name) => `${name}:${platform}`)));
  const wanted = [...independent, ...specific];
  for (const platform of PLATFORMS) {
    for (const name of perPlatform) {
      if (!specific.some((p) => p.name === name && p.architecture === platform))
        throw new Error(`apt has no ${name} for ${platform} (is it in \`dpkg --print-foreign-architectures\`, then \`apt-get update\`?)`);
    }
  }
  const specs = wanted.map((p) => (p.architecture === 'all' ? `${p.name}=${p.version}` : `${p.name}:${p.architecture}=${p.version}`));
  const uris = run('apt-get', ['download', '--print-uris', ...specs])
    .split('\n')
    .filter((l) => l.startsWith("'"))
    .map(parsePrintUris);
  return wanted.map((p) => {
    const file = uris.find((u) => u.filename.startsWith(`${p.name}_`) && u.filename.endsWith(`_${p.architecture}.deb`));
    if (!file) throw new Error(`apt-get download --print-uris gave no .deb for ${p.name} ${p.version} ${p.architecture}`);
    return { name: p.name, version: p.version, architecture: p.architecture as LockedDeb['architecture'], ...file };
  });
}

function nodeVersion(): string {
  const from = parseFinalStage(readFileSync(join(ROOT, 'Dockerfile'), 'utf8')).from;
  const major = /nodejs(\d+)/.exec(from)?.[1];
  const version = major && nodeLine(major);
  if (!version) throw new Error(`the Dockerfile's base ${from} is no supported Node line (scripts/ship/runtimes.ts NODE_LINES)`);
  return version;
}

function debianRelease(): ImageLock['debian'] {
  const osRelease = readFileSync('/etc/os-release', 'utf8');
  const get = (key: string): string | undefined => new RegExp(`^${key}="?([^"\\n]+)"?$`, 'm').exec(osRelease)?.[1];
  const codename = get('VERSION_CODENAME');
  const version = get('VERSION_ID');
  if (get('ID') !== 'debian' || !codename || !version)
    throw new Error('image:lock runs on Debian: its apt is where the packages come from');
  return { codename, version };
}

export function refreshLock(): ImageLock {
  const packages = candidates();
  const version = nodeVersion();
  const node = Object.fromEntries(
    PLATFORMS.map((platform) => {
      const pkg = `${NODE_PACKAGES[platform]}@${version}`;
      const dist = JSON.parse(run('npm', ['view', '--json', pkg, 'dist'])) as { integrity: string; tarball: string };
      return [platform, { package: NODE_PACKAGES[platform], version, integrity: dist.integrity, tarball: dist.tarball }];
    }),
  ) as ImageLock['node'];
  const lock: ImageLock = {
    debian: debianRelease(),
    packages: packages.sort((a, b) => a.name.localeCompare(b.name) || a.architecture.localeCompare(b.architecture)),
    node,
  };
  return parseLock(JSON.stringify(lock), 'the refreshed lock');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const lock = refreshLock();
    writeFileSync(LOCK_FILE, `${JSON.stringify(lock, null, 2)}\n`);
    console.log(`${LOCK_FILE}: ${lock.packages.length} Debian packages (${lock.debian.codename}), Node ${lock.node.amd64.version}`);
  } catch (err) {
    console.error(`image:lock failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exitCode = 1;
  }
}
