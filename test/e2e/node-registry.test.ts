/**
 * A release delivered as users receive it, through a real registry: the test bed's distribution
 * registry on the loopback (scripts/testbed/controlplane/registry.ts), `npm run release -- --push
 * <registry> --sign-key <key> --plain-http` run as a publisher would, then on the local node `helm
 * install oci://<registry>/charts/echoperator --version <v>`: the kubelet's containerd pulls the
 * image by digest from the registry (its hosts.toml; nothing is imported with ctr), and an Echo
 * prints. cosign verifies the signature, the SBOM and provenance attestations and the signed
 * SHA256SUMS with the public key of a key pair made for this run; another image pushed under the
 * same tag fails verification. The scanner (syft's catalogers), reading the pushed image, finds
 * the SBOM's Debian packages and Node.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import { busyboxImageSpec } from '../../scripts/ship/image/images.js';
import { ensureImageTools } from '../../scripts/ship/image/tools.js';
import { ensureHelm } from '../../scripts/ship/helm/tool.js';
import { SBOM_FILE, PLATFORM_PROPERTY } from '../../scripts/ship/release/sbom.js';
import { SUMS_FILE } from '../../scripts/ship/release/sums.js';
import { SUMS_BUNDLE_FILE } from '../../scripts/ship/release/release.js';
import { ensureCosign } from '../../scripts/ship/sign/cosign.js';
import { startRegistry } from '../../scripts/testbed/controlplane/registry.js';
import { ensureScanner, scan } from '../../scripts/testbed/scanner/scanner.js';
import { addOnsReady } from '../support/addons.js';
import { startPrivateControlPlane } from '../support/faults.js';
import { eventually, itemsOf } from '../support/kube.js';
import { scratchDir } from '../support/scratch.js';

// Built in the background by npm test while other files run: wait for them here, outside any test's timeout.
await addOnsReady(import.meta.url);

const ROOT = resolve(import.meta.dirname, '../..');
const NS = 'echoperator';
const PASSWORD = { COSIGN_PASSWORD: 'test-run-only' };

function run(command: string, args: string[], opts: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {}) {
  const r = spawnSync(command, args, {
    cwd: opts.cwd,
    encoding: 'utf8',
    timeout: opts.timeoutMs ?? 600_000,
    maxBuffer: 64 << 20,
    env: { ...process.env, ...opts.env },
  });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? String(r.error) : ''}` };
}

interface BomJson {
  components: { type: string; name: string; version?: string; purl?: string; properties?: { name: string; value: string }[] }[];
}

test(
  'release --push to the local registry, helm install from oci:// on the node (pulled by digest), an Echo prints; cosign verifies, a re-tag fails',
  { timeout: 2_400_000 },
  async (t) => {
    const dir = scratchDir('registry-release');
    const out = join(dir, 'release');
    const cosign = await ensureCosign((l) => t.diagnostic(l));
    const helm = await ensureHelm((l) => t.diagnostic(l));
    const scanner = await ensureScanner((l) => t.diagnostic(l));
    const keys = run(cosign, ['generate-key-pair'], { cwd: dir, env: PASSWORD });
    assert.ok(keys.ok, keys.out);
    const [key, pub] = [join(dir, 'cosign.key'), join(dir, 'cosign.pub')];

    const cp = await startPrivateControlPlane({ node: true });
    t.after(() => cp.stop());
    const registry = await startRegistry(cp.state, { log: (l) => t.diagnostic(l) });
    const repository = `${registry.address}/echoperator-ts`;

    // As a publisher runs it.
    const released = run(
      'npx',
      ['tsx', 'scripts/ship/release.ts', '--development', '--out', out, '--push', registry.address, '--plain-http', '--sign-key', key],
      { cwd: ROOT, env: PASSWORD, timeoutMs: 1_500_000 },
    );
    t.diagnostic(released.out);
    assert.ok(released.ok, released.out);
    const digest = /published: image \S+@(sha256:[0-9a-f]{64}), chart (\S+) --version (\S+)/.exec(released.out);
    assert.ok(digest, `release printed the published image and chart:\n${released.out}`);
    const [, imageDigest, chartRef, version] = digest;
    assert.equal(chartRef, `oci://${registry.address}/charts/echoperator`);
    const pinned = `${repository}@${imageDigest}`;

    // cosign: the image (by tag, resolved to the digest), both attestations, SHA256SUMS.
    const verify = (args: string[]) => run(cosign, [...args, '--allow-http-registry'], { env: PASSWORD });
    const checks = {
      signature: verify(['verify', '--key', pub, '--insecure-ignore-tlog=true', `${repository}:${version}`]),
      sbom: verify(['verify-attestation', '--key', pub, '--insecure-ignore-tlog=true', '--type', 'cyclonedx', pinned]),
      provenance: verify(['verify-attestation', '--key', pub, '--insecure-ignore-tlog=true', '--type', 'slsaprovenance1', pinned]),
      sums: run(cosign, [
        'verify-blob',
        '--key',
        pub,
        '--insecure-ignore-tlog=true',
        '--bundle',
        join(out, SUMS_BUNDLE_FILE),
        join(out, SUMS_FILE),
      ]),
    };
    for (const [what, r] of Object.entries(checks)) {
      t.diagnostic(`cosign ${what}: ${r.out.trim().split('\n').slice(-2).join(' | ').slice(0, 400)}`);
      assert.ok(r.ok, `cosign verifies the ${what}: ${r.out}`);
    }
    const sums = run('sha256sum', ['--check', '--strict', SUMS_FILE], { cwd: out });
    assert.ok(sums.ok, sums.out);
    const otherKey = run(cosign, ['generate-key-pair', '--output-key-prefix', 'other'], { cwd: dir, env: PASSWORD });
    assert.ok(otherKey.ok, otherKey.out);
    assert.ok(
      !verify(['verify', '--key', join(dir, 'other.pub'), '--insecure-ignore-tlog=true', pinned]).ok,
      'another key does not verify it',
    );

    // The scanner reads what the SBOM says, per platform: the Debian packages and Node.
    const bom = JSON.parse(readFileSync(join(out, SBOM_FILE), 'utf8')) as BomJson;
    for (const platform of ['linux/amd64', 'linux/arm64']) {
      const inPlatform = (c: BomJson['components'][number]) =>
        !c.properties?.some((p) => p.name === PLATFORM_PROPERTY) ||
        c.properties.some((p) => p.name === PLATFORM_PROPERTY && p.value === platform);
      const sbomDebs = bom.components.filter((c) => c.purl?.startsWith('pkg:deb/') && inPlatform(c)).map((c) => `${c.name} ${c.version}`);
      const sbomNode = bom.components.filter((c) => c.name === 'node' && inPlatform(c)).map((c) => c.version);
      const scanned = scan(scanner, `registry:${pinned}`, { platform, plainHttp: true });
      const scannedDebs = scanned.filter((p) => p.type === 'deb').map((p) => `${p.name} ${p.version}`);
      const scannedNode = scanned.filter((p) => p.name === 'node' && p.type === 'binary').map((p) => p.version);
      t.diagnostic(`${platform}: the scanner finds ${scannedDebs.length} Debian packages and node ${scannedNode.join(', ')}`);
      assert.deepEqual([...new Set(scannedDebs)].sort(), sbomDebs.sort(), `${platform}: the Debian packages`);
      assert.deepEqual(scannedNode, sbomNode, `${platform}: Node`);
    }

    // helm install from the registry; the node pulls the image by digest.
    const k = cp.kubectl;
    const install = run(
      helm,
      [
        'install',
        'echoperator',
        chartRef,
        '--version',
        version!,
        '--plain-http',
        '-n',
        NS,
        '--create-namespace',
        '--kubeconfig',
        cp.state.kubeconfig,
      ],
      { timeoutMs: 300_000 },
    );
    assert.ok(install.ok, install.out);
    const rollout = k.run(['rollout', 'status', 'deployment/echoperator', '-n', NS, '--timeout=300s'], { timeoutMs: 330_000 });
    assert.equal(rollout.code, 0, `${rollout.stdout}${rollout.stderr}\n${k.run(['get', 'events', '-n', NS]).stdout}`);
    const [pod] = itemsOf<V1Pod>(k, ['get', 'pods', '-n', NS, '-l', 'app.kubernetes.io/name=echoperator']);
    assert.equal(pod!.spec!.containers[0]!.image, pinned, 'the chart runs the pushed image by digest');
    const status = pod!.status!.containerStatuses![0]!;
    t.diagnostic(`the operator runs ${status.image} (${status.imageID})`);
    assert.equal(status.imageID, pinned, 'pulled from the registry by digest');
    const pulled = k.run(['get', 'events', '-n', NS, '--field-selector', 'reason=Pulled', '-o', 'jsonpath={.items[*].message}']).stdout;
    assert.match(pulled, new RegExp(`Successfully pulled image "${pinned.replace(/[.]/g, '\\.')}"`), pulled);

    k.ok(['create', 'namespace', 'team-a']);
    k.ok(['apply', '-n', 'team-a', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'mmontes.io/v1alpha1',
        kind: 'Echo',
        metadata: { name: 'from-registry' },
        spec: { message: 'Hola, registry!' },
      }),
    });
    const echo = await eventually(
      'Echo team-a/from-registry Succeeded',
      () => {
        const got = k.json<Echo>(['get', 'echo', 'from-registry', '-n', 'team-a']);
        return got.status?.phase === 'Succeeded' && got;
      },
      180_000,
    );
    assert.equal(k.ok(['logs', '-n', 'team-a', `job/${echo.status!.jobName!}`]), 'Hola, registry!\n');

    // Another image pushed under the same tag: verification by tag fails, the signed digest still verifies.
    const { mkimage, ocipush } = await ensureImageTools(() => undefined);
    const other = join(dir, 'other.oci.tar');
    const written = spawnSync(mkimage, [], {
      input: JSON.stringify({ ...busyboxImageSpec(), format: 'oci', output: other }),
      encoding: 'utf8',
    });
    assert.equal(written.status, 0, written.stderr);
    const retag = run(ocipush, ['--plain-http', other, `${repository}:${version}`]);
    assert.ok(retag.ok, retag.out);
    const retagged = verify(['verify', '--key', pub, '--insecure-ignore-tlog=true', `${repository}:${version}`]);
    t.diagnostic(`cosign verify of the re-tagged ${repository}:${version}: ${retagged.out.trim().split('\n').at(-1)}`);
    assert.ok(!retagged.ok, `a different digest under the tag fails verification:\n${retagged.out}`);
    assert.match(retagged.out, /no (matching )?signatures/i);
    assert.ok(verify(['verify', '--key', pub, '--insecure-ignore-tlog=true', pinned]).ok, 'the released digest still verifies');
  },
);
