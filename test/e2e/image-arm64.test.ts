/**
 * The arm64 image runs: its layer, as mkimage writes it for the release, unpacked into a scratch
 * root, and Debian's qemu-user-static (qemu-aarch64-static, copied into that root) running its
 * /nodejs/bin/node as user 65532 in a chroot: `node --version` is the lock's Node, the bundle's
 * `--version` is the package's, and the bundle started against the local control plane becomes
 * ready (/readyz). Nothing of the build machine is in that root but qemu and a kubeconfig.
 * qemu-user-static is installed with apt when missing, and arm64 added to apt's architectures
 * when the image's arm64 packages are not cached yet (scripts/ship/apt.ts).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chownSync, closeSync, copyFileSync, existsSync, mkdirSync, openSync, readFileSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensureDebianPackages } from '../../scripts/ship/apt.js';
import { packageVersion } from '../../scripts/ship/build.js';
import { readLock } from '../../scripts/ship/image/lock.js';
import { operatorImage } from '../../scripts/ship/image/operator.js';
import { ensureImageTools } from '../../scripts/ship/image/tools.js';
import { kubeconfig } from '../support/kube.js';
import { installCrds, startOperator, waitReady } from '../support/operator.js';
import { scratchDir } from '../support/scratch.js';

const QEMU = '/usr/bin/qemu-aarch64-static';
const NONROOT = 65532;

/** The image's only layer, unpacked as root (owners and modes kept) into a new folder. */
async function unpackedArm64Image(dir: string, log: (line: string) => void): Promise<string> {
  const { mkimage } = await ensureImageTools(() => undefined);
  const spec = await operatorImage('arm64', log);
  const archive = join(dir, 'arm64.oci.tar');
  const write = spawnSync(mkimage, [], { input: JSON.stringify({ ...spec, format: 'oci', output: archive }), encoding: 'utf8' });
  assert.equal(write.status, 0, write.stderr);
  const layout = join(dir, 'layout');
  mkdirSync(layout);
  assert.equal(spawnSync('tar', ['-xf', archive, '-C', layout]).status, 0);
  const blob = (digest: string) => join(layout, 'blobs', ...digest.split(':'));
  const index = JSON.parse(readFileSync(join(layout, 'index.json'), 'utf8')) as { manifests: { digest: string }[] };
  const manifest = JSON.parse(readFileSync(blob(index.manifests[0]!.digest), 'utf8')) as {
    config: { digest: string };
    layers: { digest: string }[];
  };
  const config = JSON.parse(readFileSync(blob(manifest.config.digest), 'utf8')) as { architecture: string };
  assert.equal(config.architecture, 'arm64');
  assert.equal(manifest.layers.length, 1);
  const root = join(dir, 'root');
  mkdirSync(root);
  const untar = spawnSync('tar', ['-xzf', blob(manifest.layers[0]!.digest), '-C', root, '--numeric-owner'], { encoding: 'utf8' });
  assert.equal(untar.status, 0, untar.stderr);
  copyFileSync(QEMU, join(root, 'qemu-aarch64-static'));
  return root;
}

const inRoot = (root: string, args: string[]): string[] => [
  'chroot',
  `--userspec=${NONROOT}:${NONROOT}`,
  root,
  '/qemu-aarch64-static',
  ...args,
];

test(
  'the arm64 image runs its node and the bundle under qemu-user-static, and the bundle gets ready against the control plane',
  { timeout: 900_000 },
  async (t) => {
    const log = (line: string) => t.diagnostic(line);
    ensureDebianPackages({ 'qemu-user-static': 'qemu-aarch64-static, which runs the arm64 image here' }, log);
    assert.ok(existsSync(QEMU), `${QEMU} is missing after installing qemu-user-static`);
    const root = await unpackedArm64Image(scratchDir('image-arm64'), log);
    const run = (args: string[]) => {
      const [cmd, ...rest] = inRoot(root, args);
      return spawnSync(cmd!, rest, { encoding: 'utf8', timeout: 120_000 });
    };
    const node = run(['/nodejs/bin/node', '--version']);
    assert.equal(node.status, 0, node.stderr);
    assert.equal(node.stdout, `v${readLock().node.arm64.version}\n`);
    // ELF e_machine (bytes 18-19, little-endian): 183 is EM_AARCH64.
    const elf = Buffer.alloc(20);
    const fd = openSync(join(root, 'nodejs/bin/node'), 'r');
    readSync(fd, elf, 0, 20, 0);
    closeSync(fd);
    assert.equal(elf.readUInt16LE(18), 183, 'the binary is arm64, not the host one');
    const bundle = run(['/nodejs/bin/node', '/app/echoperator.js', '--version']);
    assert.equal(bundle.status, 0, bundle.stderr);
    assert.equal(bundle.stdout, `${packageVersion()}\n`);

    // Against the control plane: the kubeconfig copied into the root, readable by the image's user only.
    installCrds();
    copyFileSync(kubeconfig(), join(root, 'kubeconfig'));
    chownSync(join(root, 'kubeconfig'), NONROOT, NONROOT);
    const op = await startOperator(t, { KUBECONFIG: '/kubeconfig' }, [], inRoot(root, ['/nodejs/bin/node', '/app/echoperator.js']));
    await waitReady(op, 300_000);
    t.diagnostic(`the arm64 bundle under qemu answered /readyz on :${op.healthPort}`);
    assert.equal(await op.stop(), 0, op.output().slice(-3000));
  },
);
