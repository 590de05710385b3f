/**
 * The image tools (tools/, a Go module of ours): mkimage, which writes an image or a
 * multi-platform index from a spec (images.ts), ocipush, which pushes an OCI archive to a
 * registry, ocivalidate, which checks one against the OCI image-spec's schemas, and pause, the
 * node's sandbox binary. Built into the per-user cache, keyed by the module's content and by the
 * Go toolchain, which is pinned: mkimage's gzip is Go's, so the same Go gives the same layer bytes
 * (and image digests) on every machine; the go command fetches that toolchain when the local Go
 * is another.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownModuleGroup, resolveBinaries, type BuildGroup } from '../gobuild.js';

/** The Go that builds the image tools. */
export const IMAGE_TOOLS_GO = 'go1.26.8';

const BINARIES = ['mkimage', 'ocipush', 'ocivalidate', 'pause'] as const;
type ImageTool = (typeof BINARIES)[number];

const own = ownModuleGroup(
  join(dirname(fileURLToPath(import.meta.url)), 'tools'),
  'images',
  BINARIES.map((b) => `./cmd/${b}`),
  [...BINARIES],
  'the image tools (mkimage, ocipush, ocivalidate, pause)',
);
const imagesGroup: BuildGroup = { ...own, key: `${own.key}-${IMAGE_TOOLS_GO}`, toolchain: IMAGE_TOOLS_GO };

/** The image tools (a few seconds to build): what making, checking and pushing an image needs. */
export async function ensureImageTools(log: (line: string) => void = (l) => console.error(l)): Promise<Record<ImageTool, string>> {
  return resolveBinaries(Object.fromEntries(BINARIES.map((b) => [b, [imagesGroup, b]])) as Record<ImageTool, [BuildGroup, string]>, log);
}
