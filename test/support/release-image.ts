/**
 * A release's image on the test's node, as its README says to put it there: the OCI archive
 * imported into the node's containerd with the flags that name it by digest (install.yaml and
 * the chart refer to it so).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { IMAGE_REPOSITORY } from '../../infra/props.js';
import { importFlags } from '../../scripts/ship/release/image.js';
import type { PrivateControlPlane } from './faults.js';

export function importReleaseImage(cp: PrivateControlPlane, archive: string): void {
  const ctr = spawnSync(
    'ctr',
    ['--address', cp.state.node!.containerdSocket, '--namespace', 'k8s.io', 'images', 'import', ...importFlags(IMAGE_REPOSITORY), archive],
    { encoding: 'utf8' },
  );
  assert.equal(ctr.status, 0, ctr.stderr);
}
