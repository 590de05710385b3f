/**
 * A release folder, from the commit the tree is at: the operator image as an OCI archive, the
 * manifests pinned to its digest, the packaged Helm chart (scripts/ship/helm), the SBOM, a README
 * (with the version's CHANGELOG section) and SHA256SUMS. Everything in it is a
 * function of the commit (and the Node binary standing in for the image's base), so a second
 * release of one commit gives the same bytes.
 */
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { IMAGE_REPOSITORY } from '../../../infra/props.js';
import { BUNDLE, ROOT, buildBundle } from '../build.js';
import { packageChart } from '../helm/generate.js';
import { baseNodeBinary, operatorImage } from '../image/operator.js';
import { buildReleaseImage } from './image.js';
import { releaseManifests } from './manifests.js';
import { nodeRuntime } from './node-runtime.js';
import { readChangelogSection } from './changelog.js';
import { NOTES_FILE, releaseNotes } from './notes.js';
import { sourceProvenance, type Provenance } from './provenance.js';
import { bundledPackages, makeBom, readPackageJson, SBOM_FILE, serializeBom, validateBom } from './sbom.js';
import { sha256File, SUMS_FILE, sumsOf } from './sums.js';
import packageJson from '../../../package.json' with { type: 'json' };

export const RELEASE_DIR = join(ROOT, 'dist/release');

export interface ReleaseResult {
  dir: string;
  provenance: Provenance;
  /** The image's manifest digest, `sha256:...`. */
  digest: string;
  archive: string;
  /** name -> bytes, every file written. */
  files: Record<string, number>;
  ms: number;
}

/**
 * Empties `dir` for a release: only a folder that is empty, missing, or a release already (it has
 * SHA256SUMS), so that a mistyped --out never deletes anything else.
 */
function emptyReleaseDir(dir: string): void {
  if (existsSync(dir) && readdirSync(dir).length && !existsSync(join(dir, SUMS_FILE)))
    throw new Error(`${dir} is neither empty nor a release (no ${SUMS_FILE}): not emptying it`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
}

/** Writes the release into `dir` (emptied first). `log` gets one line per step. */
export async function release(dir = RELEASE_DIR, log: (line: string) => void = () => {}): Promise<ReleaseResult> {
  const started = performance.now();
  const provenance = sourceProvenance(ROOT);
  if (provenance.uncommitted.length) log(`warning: not the commit's release: uncommitted changes in ${provenance.uncommitted.join(', ')}`);
  // Before any work: a version the CHANGELOG does not describe is not released.
  const changes = readChangelogSection(ROOT, provenance.version);
  emptyReleaseDir(dir);

  // The bundle at package.json's version, built now: its metafile says what is inside.
  const bundle = await buildBundle(provenance.version);
  log(`bundle: ${bundle.bytes} bytes`);
  const spec = await operatorImage();
  if (!spec.entries.some((e) => e.source === BUNDLE)) throw new Error(`the operator image does not hold ${BUNDLE}`);
  const image = await buildReleaseImage(spec, provenance, packageJson.description, dir);
  log(`image: ${image.tag} ${image.digest} (Node from ${baseNodeBinary()})`);

  const manifests = releaseManifests(IMAGE_REPOSITORY, image.digest);
  for (const [name, text] of Object.entries(manifests)) writeFileSync(join(dir, name), text);

  // The chart runs the released image by digest, as install.yaml does.
  const chart = basename(await packageChart(dir, { imageDigest: image.digest }));
  log(`chart: ${chart}`);

  const node = nodeRuntime(spec);
  const sbom = serializeBom(
    makeBom({
      provenance,
      description: packageJson.description,
      repository: IMAGE_REPOSITORY,
      digest: image.digest,
      bundle: { path: relative(ROOT, BUNDLE), sha256: await sha256File(BUNDLE) },
      packages: bundledPackages(bundle.metafile, relative(ROOT, BUNDLE), readPackageJson(ROOT)),
      node,
    }),
  );
  await validateBom(sbom);
  writeFileSync(join(dir, SBOM_FILE), sbom);
  writeFileSync(join(dir, NOTES_FILE), releaseNotes({ provenance, archive: image.file, chart, digest: image.digest, node, changes }));

  const names = readdirSync(dir).filter((n) => n !== SUMS_FILE);
  writeFileSync(join(dir, SUMS_FILE), await sumsOf(dir, names));
  const files = Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((n) => [n, statSync(join(dir, n)).size]),
  );
  return { dir, provenance, digest: image.digest, archive: image.file, files, ms: performance.now() - started };
}
