/**
 * The release image: the operator image of every platform (scripts/ship/image/operator.ts: the
 * Dockerfile's final stage on a base built from the lock's Debian packages and Node), with its OCI
 * labels, created at the commit's time, under one OCI image index, written by mkimage as an OCI
 * archive and checked against the OCI image-spec's schemas (ocivalidate). Every input is fixed by
 * the commit and the lock (timestamps, owners, order, compression), so two builds give one digest.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ensureImageTools } from '../image/tools.js';
import type { ImageConfig, ImageSpec } from '../image/images.js';
import { imageLabels } from './labels.js';
import type { Provenance } from './provenance.js';

export interface ReleaseImage {
  /** The archive's file name, in the release folder. */
  file: string;
  /** `repository:version`, the name `ctr images import` gives it. */
  tag: string;
  /** The image index's digest (`sha256:...`): what `repository@digest` names, on any platform. */
  digest: string;
  /** `linux/amd64` -> that platform's image manifest digest. */
  platforms: Record<string, string>;
}

/** mkimage's input for an OCI archive of an image index (see scripts/ship/image/tools/cmd/mkimage). */
export interface OciIndexSpec {
  tag: string;
  format: 'oci';
  created: string;
  /** On the index and on every image manifest. */
  annotations: Record<string, string>;
  output: string;
  images: Array<{ architecture: string; entries: ImageSpec['entries']; config: ImageConfig & { Labels: Record<string, string> } }>;
}

/**
 * `ctr images import` flags that name the image by digest too (`repository@sha256:...`, as the
 * pinned install refers to it; the kubelet finds a local image only by a name it has): ctr names
 * digest images `<--base-name>@<digest>`, and keeps only images under that base name.
 */
export const importFlags = (repository: string): string[] => ['--base-name', repository, '--digests'];

export const archiveName = (version: string): string => `echoperator-${version}.oci.tar`;

/** The platforms' image specs made a release's index: labels on each config (and, as OCI asks, on the manifests and the index), created at the commit. */
export function releaseIndexSpec(images: ImageSpec[], p: Provenance, description: string, output: string): OciIndexSpec {
  const labels = imageLabels(p, description);
  const tags = new Set(images.map((i) => i.tag));
  if (tags.size !== 1) throw new Error(`one index holds one tag's images, got ${[...tags].join(', ')}`);
  return {
    tag: images[0]!.tag,
    format: 'oci',
    created: p.created,
    annotations: labels,
    output,
    images: images.map((i) => {
      if (!i.architecture) throw new Error(`the image ${i.tag} names no architecture`);
      return { architecture: i.architecture, entries: i.entries, config: { ...i.config, Labels: labels } };
    }),
  };
}

/** Runs ocivalidate on an OCI archive; its report, or an error with every failure. */
export async function validateArchive(archive: string): Promise<string> {
  const { ocivalidate } = await ensureImageTools();
  const run = spawnSync(ocivalidate, [archive], { encoding: 'utf8' });
  if (run.status !== 0) throw new Error((run.stderr || run.error?.message || '').trim());
  return run.stdout;
}

export async function buildReleaseImage(images: ImageSpec[], p: Provenance, description: string, outDir: string): Promise<ReleaseImage> {
  const { mkimage } = await ensureImageTools();
  const file = archiveName(p.version);
  const spec = releaseIndexSpec(images, p, description, join(outDir, file));
  const run = spawnSync(mkimage, [], { input: JSON.stringify(spec), encoding: 'utf8', maxBuffer: 1 << 20 });
  if (run.status !== 0) throw new Error(`mkimage could not write ${file}: ${(run.stderr || run.error?.message || '').trim()}`);
  const out = JSON.parse(run.stdout) as { tag: string; digest: string; platforms: Record<string, string> };
  return { file, tag: out.tag, digest: out.digest, platforms: out.platforms };
}
