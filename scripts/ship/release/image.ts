/**
 * The release image: the operator image of the local node (scripts/testbed/operator-image.ts: the
 * Dockerfile's final stage on a local Node of the base's major standing in for distroless), with
 * its OCI labels, created at the commit's time, written by mkimage as an OCI archive. Every input
 * is fixed by the commit and the Node binary (timestamps, owners, order), so two builds give one
 * digest.
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
  /** The manifest's digest (`sha256:...`): what `repository@digest` names. */
  digest: string;
}

/** mkimage's input for an OCI archive (see scripts/ship/image/tools/cmd/mkimage). */
export interface OciImageSpec extends ImageSpec {
  config: ImageConfig & { Labels: Record<string, string> };
  format: 'oci';
  created: string;
  annotations: Record<string, string>;
  output: string;
}

/**
 * `ctr images import` flags that name the image by digest too (`repository@sha256:...`, as the
 * pinned install refers to it; the kubelet finds a local image only by a name it has): ctr names
 * digest images `<--base-name>@<digest>`, and keeps only images under that base name.
 */
export const importFlags = (repository: string): string[] => ['--base-name', repository, '--digests'];

export const archiveName = (version: string): string => `echoperator-${version}.oci.tar`;

/** The node image's spec made a release's: labels on the config (and, as OCI asks, on the manifest), created at the commit. */
export function releaseImageSpec(base: ImageSpec, p: Provenance, description: string, output: string): OciImageSpec {
  const labels = imageLabels(p, description);
  return { ...base, config: { ...base.config, Labels: labels }, format: 'oci', created: p.created, annotations: labels, output };
}

export async function buildReleaseImage(base: ImageSpec, p: Provenance, description: string, outDir: string): Promise<ReleaseImage> {
  const { mkimage } = await ensureImageTools();
  const file = archiveName(p.version);
  const spec = releaseImageSpec(base, p, description, join(outDir, file));
  const run = spawnSync(mkimage, [], { input: JSON.stringify(spec), encoding: 'utf8', maxBuffer: 1 << 20 });
  if (run.status !== 0) throw new Error(`mkimage could not write ${file}: ${(run.stderr || run.error?.message || '').trim()}`);
  const out = JSON.parse(run.stdout) as { tag: string; digest: string };
  return { file, tag: out.tag, digest: out.digest };
}
