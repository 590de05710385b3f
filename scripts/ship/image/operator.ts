/**
 * The operator's image: the bundle, built from the current sources, laid out as the Dockerfile's
 * final stage lays it out (images.ts), on a base built from the lock's Debian packages and Node
 * (base.ts), tagged as the synthesized Deployment names it. The Dockerfile's base
 * (gcr.io/distroless/nodejsNN-debianMM) and the lock must agree on the Node line and the Debian
 * release, so the image a Dockerfile user builds and the released one run the same Node on the
 * same Debian. The release writes one image per platform under an index; the test bed imports
 * the host platform's into the local node (scripts/testbed/operator-image.ts).
 */
import { readFileSync } from 'node:fs';
import { arch } from 'node:os';
import { join } from 'node:path';
import { ECHOPERATOR_VERSION, IMAGE_REPOSITORY } from '../../../infra/echoperator.js';
import { IMAGE_START, ROOT } from '../build.js';
import { ensureBundle } from '../runtimes.js';
import { baseLayer, NODE_PATH, type BaseLayer } from './base.js';
import { compileCacheFiles, type CompileCacheFile } from './compile-cache.js';
import { parseFinalStage } from './dockerfile.js';
import { operatorImageSpec, type ImageSpec } from './images.js';
import { fetchNode, resolveInputs, unpackDeb } from './inputs.js';
import { debsFor, PLATFORMS, readLock, type ImageLock, type Platform } from './lock.js';
import type { InputsPolicy } from './resolve.js';

/** The image the synthesized Deployment runs by default. */
export const OPERATOR_IMAGE = `${IMAGE_REPOSITORY}:${ECHOPERATOR_VERSION}`;

const DOCKERFILE = join(ROOT, 'Dockerfile');

/** This machine's platform among PLATFORMS. */
export function hostPlatform(): Platform {
  const name = arch() === 'x64' ? 'amd64' : arch();
  const platform = PLATFORMS.find((p) => p === name);
  if (!platform) throw new Error(`no operator image for ${arch()}: the image is built for ${PLATFORMS.join(', ')}`);
  return platform;
}

/** Throws unless the Dockerfile's base (`gcr.io/distroless/nodejsNN-debianMM...`) is the lock's Node line and Debian release. */
export function checkLockMatchesDockerfile(from: string, lock: ImageLock): void {
  const m = /nodejs(\d+)-debian(\d+)/.exec(from);
  const node = lock.node.amd64.version.split('.')[0];
  if (!m || m[1] !== node || m[2] !== lock.debian.version)
    throw new Error(
      `the Dockerfile's base ${from} is not the lock's Node ${node} on Debian ${lock.debian.version}: ` +
        'change the Dockerfile, or rewrite the lock (`npm run image:lock`) after changing the Node line',
    );
}

/**
 * The lock's inputs for `platforms`, as `policy` has them (resolve.ts): `release` refuses a locked
 * package the archive no longer serves (and the cache does not hold); `development` (the demo, the
 * tests) takes the served version and logs the change.
 */
export function operatorLock(platforms: readonly Platform[], policy: InputsPolicy, log: (line: string) => void): ImageLock {
  return resolveInputs(readLock(), platforms, policy, log).lock;
}

/** The base of one platform: the lock's packages and Node (operatorLock), fetched, checked and unpacked. */
export function operatorBase(platform: Platform, lock: ImageLock): BaseLayer {
  checkLockMatchesDockerfile(parseFinalStage(readFileSync(DOCKERFILE, 'utf8')).from, lock);
  const inputs = debsFor(lock, platform).map((deb) => ({ deb, ...unpackDeb(deb) }));
  const node = fetchNode(lock.node[platform]);
  return baseLayer(platform, inputs, { ...lock.node[platform], binary: node.binary, license: node.license });
}

/** The operator image on a base (operatorBase). */
export async function operatorImageOn(base: BaseLayer): Promise<ImageSpec> {
  const bundle = await ensureBundle();
  return operatorImageSpec({
    dockerfile: DOCKERFILE,
    repoRoot: ROOT,
    files: [bundle, IMAGE_START],
    tag: OPERATOR_IMAGE,
    base,
    compileCache: compileCacheOf(base, bundle),
  });
}

/**
 * The bundle's compile cache for the base's Node, made by running that Node: on this machine's
 * own platform only. Another platform's image carries none (its Node would run under an
 * emulator, for ~1 s of start-up saved per container start): it compiles the bundle as before.
 */
function compileCacheOf(base: BaseLayer, bundle: string): CompileCacheFile[] {
  if (base.platform !== hostPlatform()) return [];
  const node = base.entries.find((e) => e.path === NODE_PATH)?.source;
  if (!node) throw new Error(`the base of ${base.platform} has no ${NODE_PATH}`);
  return compileCacheFiles({ node, bundle, start: IMAGE_START });
}

/** The operator image of one platform (the host's by default), a development build (operatorLock). */
export async function operatorImage(
  platform: Platform = hostPlatform(),
  log: (line: string) => void = (l) => console.error(l),
): Promise<ImageSpec> {
  return operatorImageOn(operatorBase(platform, operatorLock([platform], 'development', log)));
}
