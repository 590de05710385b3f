/**
 * A past release, rebuilt from its commit (versions.ts) by that commit's own `npm run release`:
 * the commit checked out in a git worktree, its `npm ci`, its release into a folder. Nothing of
 * the current tree goes into it, so it is the release a user of that version got (the release is
 * reproducible: one commit, one set of bytes, test/e2e/node-release.test.ts). Kept in the per-user
 * cache by commit, checked against its SHA256SUMS on every use; one build at a time across
 * processes. The worktree is removed afterwards, whatever happens.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../build.js';
import { acquireBuildLock, cacheRoot } from '../gobuild.js';
import { CRDS_FILE, INSTALL_FILE } from './manifests.js';
import { SUMS_FILE } from './sums.js';
import { checkReleaseCommit, releasedVersion } from './versions.js';

export interface ReleaseFolder {
  version: string;
  dir: string;
  /** The operator image's manifest digest, as install.yaml pins it. */
  digest: string;
  chart: string;
  archive: string;
  crds: string;
  install: string;
}

/** The files of a release folder of `version`, the digest read from its install.yaml. */
export function releaseFolder(dir: string, version: string): ReleaseFolder {
  const install = join(dir, INSTALL_FILE);
  const pinned = /image: \S+@(sha256:[0-9a-f]{64})\n/.exec(readFileSync(install, 'utf8'));
  if (!pinned) throw new Error(`${install} pins no image by digest`);
  return {
    version,
    dir,
    digest: pinned[1]!,
    chart: join(dir, `echoperator-${version}.tgz`),
    archive: join(dir, `echoperator-${version}.oci.tar`),
    crds: join(dir, CRDS_FILE),
    install,
  };
}

function run(command: string, args: string[], cwd: string): void {
  const r = spawnSync(command, args, { cwd, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} (in ${cwd}) failed: ${(r.stderr || r.error?.message || '').trim()}`);
}

const intact = (dir: string): boolean =>
  existsSync(join(dir, SUMS_FILE)) && spawnSync('sha256sum', ['--check', '--strict', '--quiet', SUMS_FILE], { cwd: dir }).status === 0;

/** The release of `version` rebuilt from its commit (cached); `log` gets a line per step. */
export async function rebuildRelease(version: string, log: (line: string) => void = () => {}): Promise<ReleaseFolder> {
  const release = releasedVersion(version);
  const dir = join(cacheRoot(), 'releases', `echoperator-${version}-${release.commit.slice(0, 12)}`);
  if (intact(dir)) return releaseFolder(dir, version);
  checkReleaseCommit(ROOT, release);
  const unlock = await acquireBuildLock(`${dir}.lock`, `release ${version}`, log);
  try {
    if (intact(dir)) return releaseFolder(dir, version);
    mkdirSync(join(cacheRoot(), 'releases'), { recursive: true });
    // Beside its final place (one file system, so the rename is atomic), never half there.
    const scratch = mkdtempSync(`${dir}.build-`);
    const source = join(scratch, 'source');
    const started = performance.now();
    try {
      run('git', ['worktree', 'add', '--detach', '--quiet', source, release.commit], ROOT);
      log(`release ${version}: ${release.commit} checked out in ${source}`);
      run('npm', ['ci', '--prefer-offline', '--no-audit', '--no-fund'], source);
      run('npm', ['run', 'release', '--', '--out', join(scratch, 'release')], source);
      rmSync(dir, { recursive: true, force: true });
      renameSync(join(scratch, 'release'), dir);
      log(`release ${version}: rebuilt from its commit in ${((performance.now() - started) / 1000).toFixed(0)} s`);
    } finally {
      spawnSync('git', ['worktree', 'remove', '--force', source], { cwd: ROOT });
      spawnSync('git', ['worktree', 'prune'], { cwd: ROOT });
      rmSync(scratch, { recursive: true, force: true });
    }
    if (!intact(dir)) throw new Error(`the rebuilt release ${version} in ${dir} fails its ${SUMS_FILE}`);
    return releaseFolder(dir, version);
  } finally {
    unlock();
  }
}

if (process.argv[1]?.endsWith('rebuild.ts')) {
  const version = process.argv[2];
  if (!version) throw new Error('usage: npx tsx scripts/ship/release/rebuild.ts <version>');
  console.log(JSON.stringify(await rebuildRelease(version, (l) => console.error(l)), null, 2));
}
