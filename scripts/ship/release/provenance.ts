/**
 * Where a release comes from: the project's version (package.json), the commit it is built from,
 * and that commit's time, which stands for "created" everywhere in the release (the image's
 * config and labels, the SBOM), so that two builds of one commit are byte for byte the same.
 */
import { spawnSync } from 'node:child_process';
import { packageVersion } from '../build.js';

export interface Provenance {
  /** package.json's version. */
  version: string;
  /** The commit (40 hex digits). */
  revision: string;
  /** The commit's committer time, RFC 3339 in UTC (`2026-11-27T21:09:34Z`). */
  created: string;
  /** Files that differ from the commit under the paths a release is built from: a release of them is not the commit's. */
  uncommitted: string[];
}

/** What a release is made of: the bundle's sources, the image's recipe and lock, the install's constructs. */
export const RELEASE_INPUTS = [
  'src',
  'infra',
  'package.json',
  'package-lock.json',
  'Dockerfile',
  'CHANGELOG.md',
  'scripts/ship/build.ts',
  'scripts/ship/image',
  'scripts/ship/release',
];

function git(root: string, args: string[]): string {
  const r = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${(r.stderr || r.error?.message || '').trim()}`);
  return r.stdout;
}

/** An RFC 3339 time with any offset, as the same instant in UTC with whole seconds. */
export function utcSeconds(time: string): string {
  const ms = Date.parse(time);
  if (Number.isNaN(ms)) throw new Error(`not a time: ${JSON.stringify(time)}`);
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

export function sourceProvenance(root: string): Provenance {
  const revision = git(root, ['rev-parse', 'HEAD']).trim();
  const created = utcSeconds(git(root, ['log', '-1', '--format=%cI', revision]).trim());
  const uncommitted = git(root, ['status', '--porcelain', '--', ...RELEASE_INPUTS])
    .split('\n')
    .filter(Boolean)
    .map((line) => line.slice(3));
  return { version: packageVersion(), revision, created, uncommitted };
}
