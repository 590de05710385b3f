/**
 * The operator's image on the local node: the bundle, built from the current sources, laid out as
 * the Dockerfile's final stage lays it out (see scripts/controlplane/node/images.ts), tagged as
 * the synthesized Deployment names it, and imported into the node's containerd, so that
 * `npm run synth` then `kubectl apply --server-side -f dist/manifests/` runs it as it is.
 *
 *   npm run image:load      # into the cluster `npm run cluster:up` started (scripts/cluster.ts)
 */
import { join } from 'node:path';
import { ECHOPERATOR_VERSION, IMAGE_REPOSITORY } from '../infra/echoperator.js';
import { ROOT } from './build.js';
import { ensureNodeBinaries } from './controlplane/assets.js';
import type { ControlPlaneState } from './controlplane/cluster.js';
import { ControlPlaneError } from './controlplane/errors.js';
import { buildImage, importImages, operatorImageSpec, type ImageSpec } from './controlplane/node/images.js';
import { ensureBundle } from './runtimes.js';

/** The image the synthesized Deployment runs by default. */
export const OPERATOR_IMAGE = `${IMAGE_REPOSITORY}:${ECHOPERATOR_VERSION}`;

export async function operatorImage(): Promise<ImageSpec> {
  const bundle = await ensureBundle();
  return operatorImageSpec({ dockerfile: join(ROOT, 'Dockerfile'), repoRoot: ROOT, bundle, tag: OPERATOR_IMAGE });
}

/** Builds (or reuses) the operator image and imports it into the cluster's node. */
export async function loadOperatorImage(state: ControlPlaneState): Promise<string> {
  if (!state.node)
    throw new ControlPlaneError(
      `The cluster at ${state.server} has no node to load the operator image into.`,
      'Start it without ECHOPERATOR_NODE=false.',
    );
  const { mkimage } = await ensureNodeBinaries();
  const built = buildImage(mkimage, await operatorImage());
  importImages(state.node.containerdSocket, [built]);
  return built.tag;
}
