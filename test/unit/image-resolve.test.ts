/**
 * What a build does with a locked .deb (scripts/ship/image/resolve.ts): the cache's copy, else the
 * locked version while apt serves it; once the archive drops it, a release refuses and a
 * development build takes the served version, both naming the package, the versions and the
 * command that refreshes the lock.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readLock, type LockedDeb } from '../../scripts/ship/image/lock.js';
import { chooseDeb, REFRESH_COMMAND, resolveLock, type DebAvailability } from '../../scripts/ship/image/resolve.js';

const locked: LockedDeb = {
  name: 'libc6',
  version: '2.36-9+deb12u14',
  architecture: 'arm64',
  sha256: 'a'.repeat(64),
  size: 100,
  filename: 'libc6_2.36-9+deb12u14_arm64.deb',
  url: 'http://deb.debian.org/debian/pool/main/g/glibc/libc6_2.36-9+deb12u14_arm64.deb',
};
const newer: LockedDeb = {
  ...locked,
  version: '2.36-9+deb12u15',
  sha256: 'b'.repeat(64),
  size: 101,
  filename: 'libc6_2.36-9+deb12u15_arm64.deb',
  url: '',
};
const served = (...debs: LockedDeb[]): DebAvailability => ({ cached: false, served: debs });

test('a cached .deb is used as locked, whatever apt serves, under either policy', () => {
  for (const policy of ['release', 'development'] as const) {
    assert.deepEqual(chooseDeb(locked, { cached: true, served: [] }, policy), { kind: 'locked', deb: locked });
    assert.deepEqual(chooseDeb(locked, { cached: true, served: [newer] }, policy), { kind: 'locked', deb: locked });
  }
});

test('the locked version is fetched while apt serves it with the locked SHA-256, even when it is not the candidate', () => {
  for (const policy of ['release', 'development'] as const) {
    assert.deepEqual(chooseDeb(locked, served({ ...locked, url: '' }), policy), { kind: 'locked', deb: locked });
    assert.deepEqual(chooseDeb(locked, served(newer, { ...locked, url: '' }), policy), { kind: 'locked', deb: locked });
  }
});

test('the locked version served with another SHA-256 is refused by both policies', () => {
  for (const policy of ['release', 'development'] as const) {
    const choice = chooseDeb(locked, served({ ...locked, sha256: 'c'.repeat(64) }), policy);
    assert.equal(choice.kind, 'refused');
    assert.match(choice.kind === 'refused' ? choice.message : '', /libc6:arm64 2\.36-9\+deb12u14: apt serves it with SHA-256 c{64}/);
  }
});

test('a version the archive dropped: the release refuses, naming the package, both versions and the refresh', () => {
  const choice = chooseDeb(locked, served(newer), 'release');
  assert.equal(choice.kind, 'refused');
  const message = choice.kind === 'refused' ? choice.message : '';
  assert.match(message, /^libc6:arm64 2\.36-9\+deb12u14 -> 2\.36-9\+deb12u15: /);
  assert.match(message, /Debian's archive no longer serves the locked version\. /);
  assert.match(message, /A release builds from its lock only/);
  assert.ok(message.includes(`\`${REFRESH_COMMAND}\``), message);
  assert.ok(message.includes('scripts/ship/image/lock.json'), message);
});

test('a version the archive dropped: a development build takes the candidate and says so', () => {
  const choice = chooseDeb(locked, served(newer, { ...newer, version: '2.36-9+deb12u13', sha256: 'd'.repeat(64) }), 'development');
  assert.equal(choice.kind, 're-resolved');
  if (choice.kind !== 're-resolved') return;
  assert.deepEqual(choice.deb, newer);
  assert.deepEqual(choice.locked, locked);
  assert.match(choice.message, /^libc6:arm64 2\.36-9\+deb12u14 -> 2\.36-9\+deb12u15: /);
  assert.match(choice.message, /This development build uses 2\.36-9\+deb12u15, so its image is not the lock's/);
  assert.ok(choice.message.includes(`\`${REFRESH_COMMAND}\``), choice.message);
});

test('nothing served at all is refused by both policies, naming apt', () => {
  for (const policy of ['release', 'development'] as const) {
    const choice = chooseDeb({ ...locked, architecture: 'all', name: 'tzdata' }, served(), policy);
    assert.equal(choice.kind, 'refused');
    assert.match(choice.kind === 'refused' ? choice.message : '', /^tzdata 2\.36-9\+deb12u14: apt serves no version of tzdata/);
  }
});

test('resolveLock: packages without an answer stay locked; the release gives every refusal at once', () => {
  const lock = readLock();
  const [a, b] = lock.packages.filter((d) => d.architecture === 'arm64');
  const gone = (deb: LockedDeb): LockedDeb => ({ ...deb, version: `${deb.version}.1`, sha256: 'e'.repeat(64) });
  const answers = new Map<LockedDeb, DebAvailability>([
    [a!, served(gone(a!))],
    [b!, served(gone(b!))],
  ]);
  assert.deepEqual(
    resolveLock(lock, () => undefined, 'release'),
    { lock: { ...lock, packages: lock.packages }, warnings: [] },
  );
  assert.throws(
    () => resolveLock(lock, (d) => answers.get(d), 'release'),
    (err: Error) => err.message.startsWith("the image's locked inputs cannot be fetched (2):") && err.message.split('\n').length === 3,
  );
  const dev = resolveLock(lock, (d) => answers.get(d), 'development');
  assert.equal(dev.warnings.length, 2);
  assert.deepEqual(
    dev.lock.packages.filter((d) => d.sha256 === 'e'.repeat(64)).map((d) => d.name),
    [a!.name, b!.name],
  );
  assert.equal(dev.lock.packages.length, lock.packages.length);
  assert.deepEqual(
    dev.lock.packages.filter((d) => d !== answers.get(a!)!.served[0] && d !== answers.get(b!)!.served[0]),
    lock.packages.filter((d) => d !== a && d !== b),
  );
});
