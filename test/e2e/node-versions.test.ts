/**
 * The cluster runs the release KUBERNETES_VERSION selects (the newest by default), and its node
 * the kubelet releases.ts gives it: the control plane's, or at most three minors older (the
 * version-skew policy), as the API server reports them.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1NodeList } from '@kubernetes/client-node';
import { kubernetesVersion, nodeKubernetesVersion } from '../../scripts/testbed/controlplane/assets.js';
import { kubectlJson, kubectlOk, onLocalControlPlane } from '../support/kube.js';

test(
  'the API server and the node report the selected release and its kubelet',
  { skip: !onLocalControlPlane() && 'USE_EXISTING_CLUSTER' },
  () => {
    const server = JSON.parse(kubectlOk(['get', '--raw', '/version'])) as { gitVersion: string };
    assert.equal(server.gitVersion, kubernetesVersion());
    const nodes = kubectlJson<V1NodeList>(['get', 'nodes', '-o', 'json']).items;
    assert.equal(nodes.length, 1);
    assert.equal(nodes[0]!.status?.nodeInfo?.kubeletVersion, nodeKubernetesVersion());
  },
);
