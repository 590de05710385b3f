/**
 * The released versions, each with the commit its release was made from. The commit, not the
 * tag, is the record: tags (`v0.1.0`) are not pushed with a branch, so a fresh clone may have none,
 * while every commit here is on main and so in every full clone. A tag that exists must name the
 * same commit, or the record and the repository disagree.
 */
import { spawnSync } from 'node:child_process';

export interface ReleasedVersion {
  version: string;
  /** The commit (40 hex digits) the release is built from. */
  commit: string;
}

/** Oldest first. */
export const RELEASES: readonly ReleasedVersion[] = [{ version: '0.1.0', commit: 'b4d68c21e11b518b8dde9ce6bf62c017a9128489' }];

/** The tag a version is published under. */
export const releaseTag = (version: string): string => `v${version}`;

export function releasedVersion(version: string): ReleasedVersion {
  const found = RELEASES.find((r) => r.version === version);
  if (!found) throw new Error(`${version} is not a released version: the released ones are ${RELEASES.map((r) => r.version).join(', ')}`);
  return found;
}

function git(root: string, args: string[]): { ok: boolean; out: string } {
  const r = spawnSync('git', args, { cwd: root, encoding: 'utf8' });
  return { ok: r.status === 0, out: (r.stdout || '').trim() };
}

/**
 * Checks that the repository at `root` holds the release's commit, and that its tag, if any,
 * names it. A shallow clone (CI's default `fetch-depth: 1`) lacks the history: the error says how
 * to fetch it.
 */
export function checkReleaseCommit(root: string, release: ReleasedVersion): void {
  if (!git(root, ['cat-file', '-e', `${release.commit}^{commit}`]).ok) {
    const shallow = git(root, ['rev-parse', '--is-shallow-repository']).out === 'true';
    throw new Error(
      `the commit of release ${release.version} (${release.commit}) is not in the repository at ${root}` +
        (shallow
          ? ': it is a shallow clone; fetch the history with `git fetch --unshallow` (CI: actions/checkout with fetch-depth: 0)'
          : ': fetch main with its history (`git fetch origin main`)'),
    );
  }
  const tag = releaseTag(release.version);
  const tagged = git(root, ['rev-parse', '--verify', '--quiet', `refs/tags/${tag}^{commit}`]);
  if (tagged.ok && tagged.out !== release.commit)
    throw new Error(`tag ${tag} names ${tagged.out}, but release ${release.version} was made from ${release.commit}`);
}
