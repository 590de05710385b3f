/**
 * A release's notes are the CHANGELOG's section of its version; the released versions are
 * recorded by commit, which a fresh full clone holds and a shallow one is told how to fetch.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import packageJson from '../../package.json' with { type: 'json' };
import { changelogSection, changelogSections, CHANGELOG_FILE } from '../../scripts/ship/release/changelog.js';
import { readLock } from '../../scripts/ship/image/lock.js';
import { releaseNotes } from '../../scripts/ship/release/notes.js';
import { checkReleaseCommit, RELEASES, releasedVersion } from '../../scripts/ship/release/versions.js';

const CHANGELOG = `# Changelog

Intro.

## [Unreleased]

## [1.3.0] - 2026-12-01

Upgrading: nothing to do.

### Added

- The new thing.

## [1.2.3] - 2026-11-27

### Fixed

- The old bug.

[Unreleased]: https://example.invalid/compare/v1.3.0...HEAD
[1.3.0]: https://example.invalid/compare/v1.2.3...v1.3.0
`;

test('each version section is read with its date and body, to the next heading or the link definitions', () => {
  assert.deepEqual(changelogSections(CHANGELOG), [
    { version: 'Unreleased', date: undefined, body: '' },
    { version: '1.3.0', date: '2026-12-01', body: 'Upgrading: nothing to do.\n\n### Added\n\n- The new thing.' },
    { version: '1.2.3', date: '2026-11-27', body: '### Fixed\n\n- The old bug.' },
  ]);
});

test('a version with no section, no date or an empty section is refused, saying what to write', () => {
  assert.throws(() => changelogSection(CHANGELOG, '9.9.9'), /CHANGELOG\.md has no section for 9\.9\.9: add "## \[9\.9\.9\] - YYYY-MM-DD"/);
  assert.throws(() => changelogSection(CHANGELOG, 'Unreleased'), /has no date/);
  assert.throws(
    () => changelogSection('## [2.0.0] - 2027-01-01\n\n## [1.0.0] - 2026-01-01\n- x\n', '2.0.0'),
    /section for 2\.0\.0 is empty/,
  );
});

test("the release notes carry the version's section, its subsections under the notes' heading", () => {
  const notes = releaseNotes({
    provenance: { version: '1.3.0', revision: 'c'.repeat(40), created: '2026-12-01T10:00:00Z', uncommitted: [] },
    archive: 'echoperator-1.3.0.oci.tar',
    chart: 'echoperator-1.3.0.tgz',
    image: { digest: `sha256:${'ab'.repeat(32)}`, platforms: { 'linux/amd64': `sha256:${'cd'.repeat(32)}` } },
    lock: readLock(),
    changes: changelogSection(CHANGELOG, '1.3.0'),
  });
  assert.match(notes, /^# echoperator 1\.3\.0\n/);
  assert.ok(
    notes.includes('## What changed (2026-12-01, from CHANGELOG.md)\n\nUpgrading: nothing to do.\n\n### Added\n\n- The new thing.\n'),
    notes,
  );
  assert.doesNotMatch(notes, /The old bug/);
});

test("this repository's CHANGELOG describes package.json's version and every released one; package.json's is not released", () => {
  const text = readFileSync(CHANGELOG_FILE, 'utf8');
  for (const version of [packageJson.version, ...RELEASES.map((r) => r.version)]) assert.ok(changelogSection(text, version).body);
  assert.ok(!RELEASES.some((r) => r.version === packageJson.version), `${packageJson.version} is released already: bump package.json`);
  const newest = RELEASES.at(-1)!.version.split('.').map(Number);
  const current = packageJson.version.split('.').map(Number);
  assert.ok(
    current[0]! * 1e6 + current[1]! * 1e3 + current[2]! > newest[0]! * 1e6 + newest[1]! * 1e3 + newest[2]!,
    'newer than the newest release',
  );
  assert.throws(() => releasedVersion('0.0.9'), /0\.0\.9 is not a released version: the released ones are 0\.1\.0/);
});

test("a release's commit is found in a full clone, and a shallow clone is told to fetch the history", (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-versions-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const git = (cwd: string, args: string[]): string => {
    const r = spawnSync('git', ['-c', 'user.name=T', '-c', 'user.email=t@example.invalid', ...args], { cwd, encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim();
  };
  const origin = join(dir, 'origin');
  spawnSync('mkdir', [origin]);
  git(origin, ['init', '--quiet', '-b', 'main']);
  writeFileSync(join(origin, 'f'), '1');
  git(origin, ['add', 'f']);
  git(origin, ['commit', '--quiet', '-m', 'first']);
  const first = git(origin, ['rev-parse', 'HEAD']);
  writeFileSync(join(origin, 'f'), '2');
  git(origin, ['commit', '--quiet', '-am', 'second']);
  const release = { version: '1.0.0', commit: first };

  checkReleaseCommit(origin, release);
  git(dir, ['clone', '--quiet', '--depth', '1', `file://${origin}`, 'shallow']);
  assert.throws(
    () => checkReleaseCommit(join(dir, 'shallow'), release),
    /is not in the repository .*shallow clone; .*git fetch --unshallow/,
  );
  git(origin, ['tag', 'v1.0.0', 'HEAD']);
  assert.throws(() => checkReleaseCommit(origin, release), /tag v1\.0\.0 names [0-9a-f]{40}, but release 1\.0\.0 was made from/);
});
