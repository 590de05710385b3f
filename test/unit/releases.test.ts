/**
 * Which Kubernetes the local cluster runs (scripts/testbed/controlplane/releases.ts): KUBERNETES_VERSION
 * by minor or exact version, the newest by default, anything else refused naming the accepted
 * values; the oldest release is the operator's minimum; each release's Go module pins it; the
 * node's kubelet stays within the version-skew policy.
 */
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { pinnedVersion } from '../../scripts/ship/gobuild.js';
import { ControlPlaneError } from '../../scripts/ship/errors.js';
import { minorNumber, nodeRelease, releases, selectedRelease } from '../../scripts/testbed/controlplane/releases.js';
import { MINIMUM_KUBERNETES } from '../../src/api/kubernetes.js';

const GOMOD = join(import.meta.dirname, '..', '..', 'scripts', 'testbed', 'controlplane', 'gomod');
const all = releases(GOMOD);
const pick = (v?: string) => selectedRelease(GOMOD, v === undefined ? {} : { KUBERNETES_VERSION: v }).version;

describe('Kubernetes releases of the local cluster', () => {
  it('the default is the newest; a minor or an exact version selects one', () => {
    assert.equal(pick(), all[0]!.version);
    assert.equal(pick(''), all[0]!.version);
    const oldest = all.at(-1)!;
    for (const v of [oldest.minor, `v${oldest.minor}`, oldest.version, oldest.version.slice(1)]) assert.equal(pick(v), oldest.version);
  });

  it('an unknown version stops the run naming the setting and the accepted values', () => {
    assert.throws(
      () => pick('1.30'),
      (err: unknown) =>
        err instanceof ControlPlaneError &&
        /^KUBERNETES_VERSION=1\.30 is not a release/.test(err.message) &&
        all.every((r) => err.hint?.includes(`${r.minor} (${r.version})`)),
    );
  });

  it("the oldest release is the operator's minimum, and the newest is newer", () => {
    assert.equal(all.at(-1)!.minor, MINIMUM_KUBERNETES);
    assert.ok(minorNumber(all[0]!.minor) > minorNumber(MINIMUM_KUBERNETES));
  });

  it("each release's Go module pins k8s.io/kubernetes at that release", () => {
    for (const r of all) assert.equal(pinnedVersion(r.module, 'k8s.io/kubernetes'), r.version);
  });

  it("the node's kubelet is the control plane's release, or at most three minors older", () => {
    for (const r of all) {
      const node = nodeRelease(r, GOMOD);
      const skew = minorNumber(r.minor) - minorNumber(node.minor);
      assert.ok(skew >= 0 && skew <= 3, `${r.version}: node ${node.version}`);
    }
  });
});
