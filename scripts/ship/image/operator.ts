/**
 * The operator's image: the bundle, built from the current sources, laid out as the Dockerfile's
 * final stage lays it out (images.ts), on the Node line of the Dockerfile's base, tagged as the
 * synthesized Deployment names it. The release writes it as an OCI archive; the test bed imports
 * it into the local node (scripts/testbed/operator-image.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ECHOPERATOR_VERSION, IMAGE_REPOSITORY } from '../../../infra/echoperator.js';
import { ROOT } from '../build.js';
import { ControlPlaneError } from '../errors.js';
import { ensureBundle, nodeBinary, nodeLine } from '../runtimes.js';
import { parseFinalStage } from './dockerfile.js';
import { operatorImageSpec, type ImageSpec } from './images.js';

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
