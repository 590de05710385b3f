/**
 * The image tools (tools/, a Go module of ours): mkimage, which writes an image from a spec
 * (images.ts), and pause, the node's sandbox binary. Built into the per-user cache, keyed by the
 * module's content, in a few seconds.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownModuleGroup, resolveBinaries } from '../gobuild.js';

const imagesGroup = ownModuleGroup(
  join(dirname(fileURLToPath(import.meta.url)), 'tools'),
  'images',
  ['./cmd/mkimage', './cmd/pause'],
  ['mkimage', 'pause'],
  'the image tools (mkimage, pause)',
);

/** mkimage and pause alone (a few seconds to build): what making an image needs. */
export async function ensureImageTools(log: (line: string) => void = (l) => console.error(l)): Promise<{ mkimage: string; pause: string }> {
  return resolveBinaries({ mkimage: [imagesGroup, 'mkimage'], pause: [imagesGroup, 'pause'] }, log);
}
