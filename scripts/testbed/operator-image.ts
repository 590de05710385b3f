/**
 * The operator's image on the local node: the image of scripts/ship/image/operator.ts, imported
 * into the node's containerd, so that `npm run synth` then `kubectl apply --server-side -f
 * dist/manifests/` runs it as it is.
 *
 *   npm run image:load      # into the cluster `npm run cluster:up` started (scripts/testbed/cluster.ts)
 */
import { ControlPlaneError } from '../ship/errors.js';
import { buildImage, importImages } from '../ship/image/images.js';
import { operatorImage } from '../ship/image/operator.js';
import { ensureImageTools } from '../ship/image/tools.js';
import type { ControlPlaneState } from './controlplane/cluster.js';

/** Builds (or reuses) the operator image and imports it into the cluster's node. */
export async function loadOperatorImage(state: ControlPlaneState): Promise<string> {
  if (!state.node)
    throw new ControlPlaneError(
      `The cluster at ${state.server} has no node to load the operator image into.`,
      'Start it without ECHOPERATOR_NODE=false.',
    );
  const { mkimage } = await ensureImageTools();
  const built = buildImage(mkimage, await operatorImage());
  importImages(state.node.containerdSocket, [built]);
  return built.tag;
}
