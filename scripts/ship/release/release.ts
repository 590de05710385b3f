/**
 * A release folder, from the commit the tree is at: the operator image (an index of one image per
 * platform) as an OCI archive, the manifests pinned to its digest, the packaged Helm chart
 * (scripts/ship/helm), the SBOM, a README (with the version's CHANGELOG section) and SHA256SUMS.
 * Everything in it is a function of the commit (the image's base included:
 * scripts/ship/image/lock.json pins its packages and Node), so a second release of one commit gives
 * the same bytes.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { IMAGE_REPOSITORY } from '../../../infra/props.js';
import { BUNDLE, ROOT, buildBundle } from '../build.js';
import { packageChart } from '../helm/generate.js';
import { CA_BUNDLE_PATH, type BaseLayer } from '../image/base.js';
import { COMPILE_CACHE_DIR } from '../image/compile-cache.js';
import { operatorBase, operatorImageOn, operatorLock } from '../image/operator.js';
import { LOCK_FILE, PLATFORMS } from '../image/lock.js';
import type { InputsPolicy } from '../image/resolve.js';
import type { ImageSpec } from '../image/images.js';
import { buildReleaseImage, validateArchive, type ReleaseImage } from './image.js';
import { releaseManifests } from './manifests.js';
import { readChangelogSection } from './changelog.js';
import { SOURCE_URL } from './labels.js';
import { slsaPredicate, SLSA_FILE } from './slsa.js';
import { ensureCosign, signBlob, type CosignOptions } from '../sign/cosign.js';
import { NOTES_FILE, releaseNotes } from './notes.js';
import { sourceProvenance, type Provenance } from './provenance.js';
import { bundledPackages, makeBom, readPackageJson, SBOM_FILE, serializeBom, validateBom, type PlatformContents } from './sbom.js';
import { sha256File, SUMS_FILE, sumsOf } from './sums.js';
import packageJson from '../../../package.json' with { type: 'json' };

export const RELEASE_DIR = join(ROOT, 'dist/release');

export interface ReleaseResult {
  dir: string;
  provenance: Provenance;
  /** The image's repository, as the manifests and the chart name it. */
  repository: string;
  /** The packaged chart's file name. */
  chart: string;
  /** The image index's digest, `sha256:...`. */
  digest: string;
  /** `linux/amd64` -> that platform's image manifest digest. */
  platforms: Record<string, string>;
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

export interface ReleaseOptions {
  /** Where the image is published (its name in install.yaml, the chart and the SBOM); IMAGE_REPOSITORY by default. */
  repository?: string;
  /** cosign's private key: SHA256SUMS is signed with it (SUMS_BUNDLE_FILE). */
  signKey?: string;
  cosign?: CosignOptions;
  /** The SLSA provenance's builder id. */
  builderId?: string;
  /**
   * `release` (the default): every input is the lock's, or the release is refused. `development`
   * (tests): a locked .deb the archive no longer serves is replaced by the served one, with a warning.
   */
  inputs?: InputsPolicy;
}

/** cosign's bundle for SHA256SUMS: `cosign verify-blob --key cosign.pub --bundle SHA256SUMS.sigstore.json SHA256SUMS`. */
export const SUMS_BUNDLE_FILE = `${SUMS_FILE}.sigstore.json`;

/** Writes the release into `dir` (emptied first). `log` gets one line per step. */
export async function release(
  dir = RELEASE_DIR,
  log: (line: string) => void = () => {},
  opts: ReleaseOptions = {},
): Promise<ReleaseResult> {
  const repository = opts.repository ?? IMAGE_REPOSITORY;
  const started = performance.now();
  const provenance = sourceProvenance(ROOT);
  if (provenance.uncommitted.length) log(`warning: not the commit's release: uncommitted changes in ${provenance.uncommitted.join(', ')}`);
  // Before any work: a version the CHANGELOG does not describe is not released.
  const changes = readChangelogSection(ROOT, provenance.version);
  emptyReleaseDir(dir);

  // The bundle at package.json's version, built now: its metafile says what is inside.
  const bundle = await buildBundle(provenance.version);
  log(`bundle: ${bundle.bytes} bytes`);
  const lock = operatorLock(PLATFORMS, opts.inputs ?? 'release', log);
  const bases = PLATFORMS.map((platform) => operatorBase(platform, lock));
  const specs: ImageSpec[] = [];
  for (const base of bases) {
    const spec = await operatorImageOn(base);
    if (!spec.entries.some((e) => e.source === BUNDLE)) throw new Error(`the operator image does not hold ${BUNDLE}`);
    specs.push(spec);
  }
  const image = await buildReleaseImage(specs, provenance, packageJson.description, dir);
  log(
    `image: ${image.tag} ${image.digest} (${Object.entries(image.platforms)
      .map(([p, d]) => `${p} ${d}`)
      .join(', ')})`,
  );
  const validation = (await validateArchive(join(dir, image.file))).trim().split('\n');
  log(`image: ${validation.at(-1)} (${validation.length - 1} documents and blobs checked against the OCI image-spec's schemas)`);

  const manifests = releaseManifests(repository, image.digest);
  for (const [name, text] of Object.entries(manifests)) writeFileSync(join(dir, name), text);

  // The chart runs the released image by digest, as install.yaml does.
  const chart = basename(await packageChart(dir, { imageDigest: image.digest, imageRepository: opts.repository }));
  log(`chart: ${chart}`);

  const platforms = await platformContents(image, specs, bases);
  const sbom = serializeBom(
    makeBom({
      provenance,
      description: packageJson.description,
      repository,
      digest: image.digest,
      bundle: { path: relative(ROOT, BUNDLE), sha256: await sha256File(BUNDLE) },
      packages: bundledPackages(bundle.metafile, relative(ROOT, BUNDLE), readPackageJson(ROOT)),
      debianVersion: lock.debian.version,
      platforms,
    }),
  );
  await validateBom(sbom);
  writeFileSync(join(dir, SBOM_FILE), sbom);
  writeFileSync(join(dir, NOTES_FILE), releaseNotes({ provenance, archive: image.file, chart, image, lock, changes }));

  const slsa = slsaPredicate({
    provenance,
    lock,
    lockSha256: await sha256File(LOCK_FILE),
    packageLockSha256: await sha256File(join(ROOT, 'package-lock.json')),
    builderId: opts.builderId ?? `${SOURCE_URL}/blob/${provenance.revision}/scripts/ship/release.ts`,
  });
  writeFileSync(join(dir, SLSA_FILE), `${JSON.stringify(slsa, null, 2)}\n`);

  const names = readdirSync(dir).filter((n) => n !== SUMS_FILE);
  writeFileSync(join(dir, SUMS_FILE), await sumsOf(dir, names));
  if (opts.signKey) {
    signBlob(opts.cosign ?? { cosign: await ensureCosign(log) }, opts.signKey, join(dir, SUMS_FILE), join(dir, SUMS_BUNDLE_FILE));
    log(`sign: ${SUMS_FILE} -> ${SUMS_BUNDLE_FILE}`);
  }
  const files = Object.fromEntries(
    readdirSync(dir)
      .sort()
      .map((n) => [n, statSync(join(dir, n)).size]),
  );
  return {
    dir,
    provenance,
    repository,
    chart,
    digest: image.digest,
    platforms: image.platforms,
    archive: image.file,
    files,
    ms: performance.now() - started,
  };
}

/** The entrypoint and the code cache the build wrote beside the bundle (compile-cache.ts), hashed. */
async function builtFiles(spec: ImageSpec): Promise<PlatformContents['generated']> {
  const from = (path: string): string | undefined =>
    path === 'app/start.js'
      ? 'src/cachedstart.ts (esbuild)'
      : path.startsWith(`${COMPILE_CACHE_DIR}/`)
        ? "the bundle, compiled by the image's Node"
        : undefined;
  const out: PlatformContents['generated'] = [];
  for (const e of spec.entries) {
    const what = from(e.path);
    if (what && e.source) out.push({ path: e.path, sha256: await sha256File(e.source), from: what });
  }
  return out;
}

/** What each platform's image holds besides the bundle, hashed, for the SBOM. */
async function platformContents(image: ReleaseImage, specs: ImageSpec[], bases: BaseLayer[]): Promise<PlatformContents[]> {
  const out: PlatformContents[] = [];
  for (const [i, spec] of specs.entries()) {
    const platform = `linux/${spec.architecture}`;
    const digest = image.platforms[platform];
    if (!digest) throw new Error(`mkimage wrote no ${platform} image (it wrote ${Object.keys(image.platforms).join(', ')})`);
    const base = bases[i]!;
    const ca = spec.entries.find((e) => e.path === CA_BUNDLE_PATH);
    if (ca?.content === undefined) throw new Error(`the ${platform} image has no /${CA_BUNDLE_PATH}`);
    out.push({
      platform,
      architecture: spec.architecture!,
      digest,
      node: { ...base.node, sha256: await sha256File(base.node.binary) },
      debs: base.packages.map((p) => ({ ...p.deb, files: p.files.length })),
      generated: [
        { path: CA_BUNDLE_PATH, sha256: createHash('sha256').update(ca.content).digest('hex'), from: "ca-certificates' certificates" },
        ...(await builtFiles(spec)),
      ],
    });
  }
  return out;
}
