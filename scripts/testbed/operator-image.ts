/**
 * The operator's image on the local node: the bundle, built from the current sources, laid out as
 * the Dockerfile's final stage lays it out (see scripts/ship/image/images.ts), tagged as
 * the synthesized Deployment names it, and imported into the node's containerd, so that
 * `npm run synth` then `kubectl apply --server-side -f dist/manifests/` runs it as it is.
 *
 *   npm run image:load      # into the cluster `npm run cluster:up` started (scripts/testbed/cluster.ts)
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ECHOPERATOR_VERSION, IMAGE_REPOSITORY } from '../../infra/echoperator.js';
import { ROOT } from '../ship/build.js';
import { ensureNodeBinaries } from './controlplane/assets.js';
import type { ControlPlaneState } from './controlplane/cluster.js';
import { ControlPlaneError } from '../ship/errors.js';
import { parseFinalStage } from '../ship/image/dockerfile.js';
import { buildImage, importImages, operatorImageSpec, type ImageSpec } from '../ship/image/images.js';
import { ensureBundle, nodeBinary, nodeLine } from '../ship/runtimes.js';

/** The image the synthesized Deployment runs by default. */
export const OPERATOR_IMAGE = `${IMAGE_REPOSITORY}:${ECHOPERATOR_VERSION}`;

const DOCKERFILE = join(ROOT, 'Dockerfile');

/**
 * The Node binary that stands in for the Dockerfile's distroless base: the same major as its
 * `nodejsNN` tag, so the local image runs what the released one runs. This machine's Node when
 * the majors match, else that supported line's binary from npm (runtimes.ts).
 */
export function baseNodeBinary(dockerfile = DOCKERFILE): string {
  const from = parseFinalStage(readFileSync(dockerfile, 'utf8')).from;
  const major = /nodejs(\d+)/.exec(from)?.[1];
  if (major === process.versions.node.split('.')[0]) return process.execPath;
  const version = major && nodeLine(major);
  if (version) {
    const node = nodeBinary(version);
    if (node.path) return node.path;
    throw new ControlPlaneError(`The operator image's base is ${from}, and Node ${version} is unavailable: ${node.reason}`);
  }
  throw new ControlPlaneError(`The operator image's base is ${from}: no local Node ${major ?? '(unknown major)'} to stand in for it.`);
}

export async function operatorImage(): Promise<ImageSpec> {
  const bundle = await ensureBundle();
  return operatorImageSpec({ dockerfile: DOCKERFILE, repoRoot: ROOT, bundle, tag: OPERATOR_IMAGE, node: baseNodeBinary() });
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
