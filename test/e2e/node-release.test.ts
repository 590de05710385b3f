/**
 * Installing from a release folder alone, as a user with no registry and no source tree would:
 * `npm run release` (its function) into a scratch folder, then from that folder only: the
 * checksums verified, the OCI archive imported into the node's containerd, `kubectl apply
 * --server-side -f crds.yaml -f install.yaml`, the operator Ready as a pod of the image pinned by
 * digest, and an Echo's pod prints its message. A second release of the same tree gives the same
 * files byte for byte (image digest included).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import { IMAGE_REPOSITORY } from '../../infra/props.js';
import { release } from '../../scripts/ship/release/release.js';
import { CRDS_FILE, INSTALL_FILE } from '../../scripts/ship/release/manifests.js';
import { SUMS_FILE } from '../../scripts/ship/release/sums.js';
import { startPrivateControlPlane } from '../support/faults.js';
import { importReleaseImage } from '../support/release-image.js';
import { eventually, itemsOf } from '../support/kube.js';
import { addOnsReady } from '../support/addons.js';

// Built in the background by npm test while other files run: wait for it here, outside any test's timeout.
await addOnsReady(import.meta.url);

const NS = 'echoperator';

test(
  'a release folder alone installs the operator on the node, and a second release is the same bytes',
  { timeout: 900_000 },
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'echoperator-release-'));
    const again = mkdtempSync(join(tmpdir(), 'echoperator-release-'));
    t.after(() => [dir, again].forEach((d) => rmSync(d, { recursive: true, force: true })));
    const made = await release(dir, (line) => t.diagnostic(line), { inputs: 'development' });
    assert.ok(Object.keys(made.files).includes(`echoperator-${made.provenance.version}.tgz`), 'the Helm chart is in the release');
    t.diagnostic(`release in ${(made.ms / 1000).toFixed(1)} s: ${JSON.stringify(made.files)}`);

    // Reproducible: the same tree again gives the same files, so the same image digest.
    const second = await release(again, (line) => t.diagnostic(line));
    // (In a tree that others commit to meanwhile, the two would be of two commits: say so.)
    const commits = `${made.provenance.revision} then ${second.provenance.revision}`;
    assert.equal(second.digest, made.digest, `the image digest of two releases (${commits})`);
    assert.equal(
      readFileSync(join(again, SUMS_FILE), 'utf8'),
      readFileSync(join(dir, SUMS_FILE), 'utf8'),
      `${SUMS_FILE} of two releases (${commits})`,
    );

    // From here on, only the folder: its checksums hold.
    const sums = spawnSync('sha256sum', ['--check', '--strict', SUMS_FILE], { cwd: dir, encoding: 'utf8' });
    assert.equal(sums.status, 0, sums.stdout + sums.stderr);
    const pinned = `${IMAGE_REPOSITORY}@${made.digest}`;
    assert.ok(readFileSync(join(dir, INSTALL_FILE), 'utf8').includes(`image: ${pinned}\n`), `${INSTALL_FILE} pins ${pinned}`);

    const cp = await startPrivateControlPlane({ node: true });
    t.after(() => cp.stop());
    const k = cp.kubectl;
    importReleaseImage(cp, join(dir, made.archive));
    k.ok(['apply', '--server-side', '-f', join(dir, CRDS_FILE), '-f', join(dir, INSTALL_FILE)]);
    const rollout = k.run(['rollout', 'status', 'deployment/echoperator', '-n', NS, '--timeout=180s'], { timeoutMs: 210_000 });
    assert.equal(
      rollout.code,
      0,
      `${rollout.stdout}${rollout.stderr}\n${k.run(['get', 'events', '-n', NS, '--sort-by=.lastTimestamp']).stdout}`,
    );
    const [pod] = itemsOf<V1Pod>(k, ['get', 'pods', '-n', NS, '-l', 'app.kubernetes.io/name=echoperator']);
    assert.equal(pod!.spec!.containers[0]!.image, pinned);
    const status = pod!.status!.containerStatuses![0]!;
    assert.ok(status.ready, 'the operator container is Ready');
    t.diagnostic(`the operator runs image ${status.image} (${status.imageID})`);
    assert.ok(status.imageID.endsWith(made.digest), `the container's image ${status.imageID} is ${made.digest}`);

    k.ok(['create', 'namespace', 'team-a']);
    k.ok(['label', 'namespace', 'team-a', 'pod-security.kubernetes.io/enforce=restricted']);
    k.ok(['apply', '-n', 'team-a', '-f', '-'], {
      input: JSON.stringify({
        apiVersion: 'mmontes.io/v1alpha1',
        kind: 'Echo',
        metadata: { name: 'from-release' },
        spec: { message: 'Hola, release!' },
      }),
    });
    const echo = await eventually(
      'Echo team-a/from-release Succeeded',
      () => {
        const got = k.json<Echo>(['get', 'echo', 'from-release', '-n', 'team-a']);
        return got.status?.phase === 'Succeeded' && got;
      },
      120_000,
    );
    assert.equal(k.ok(['logs', '-n', 'team-a', `job/${echo.status!.jobName!}`]), 'Hola, release!\n');
  },
);
