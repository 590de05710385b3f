/**
 * The release's SBOM, CycloneDX 1.6 JSON, made and checked with the CycloneDX library
 * (@cyclonedx/cyclonedx-library): what the image holds, and nothing it does not.
 *
 * - the npm packages whose code is inside the bundle: esbuild's metafile lists, for the bundle,
 *   every input file with the bytes it put in; a package counts when one of its files put any
 *   (a package that is imported but tree-shaken away is not in the image); name, version and
 *   license come from its package.json in node_modules, the purl is npm's;
 * - the bundle itself (its SHA-256);
 * - per platform of the image index (a container component named by its manifest digest): the
 *   Node binary at /nodejs/bin/node (its SHA-256, and the npm package and tarball integrity it
 *   came from), every Debian package of the base (the .deb's SHA-256 and the archive URL it was
 *   fetched from, the purl scanners give it), and the files the build made (the CA bundle).
 *
 * Every file the document names carries its SHA-256; every component says where it came from.
 * The document is a function of its inputs: its timestamp is the commit's time, its serial number
 * is derived from the image digest, lists are sorted.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Contrib, Enums, Models, Serialize, Spec, Validation } from '@cyclonedx/cyclonedx-library';
import type { Metafile } from 'esbuild';
import { PackageURL } from 'packageurl-js';
import spdxExpressionParse from 'spdx-expression-parse';
import { NODE_PATH } from '../image/base.js';
import type { LockedDeb, LockedNode } from '../image/lock.js';
import { SOURCE_URL, TITLE } from './labels.js';
import type { Provenance } from './provenance.js';

export const SBOM_FILE = 'sbom.cdx.json';

/** The property that tells which platform's image a component is in (absent: every platform's). */
export const PLATFORM_PROPERTY = 'echoperator:platform';

/** An npm package as node_modules holds it. */
export interface BundledPackage {
  /** Its folder, relative to the project (`node_modules/@scope/name`). */
  dir: string;
  packageJson: { name: string; version: string; license?: string; description?: string; [key: string]: unknown };
}

/** `node_modules/@scope/name` (the innermost node_modules) of an input path, or undefined for the project's own files. */
export function packageDir(input: string): string | undefined {
  const at = input.lastIndexOf('node_modules/');
  if (at < 0) return undefined;
  const rest = input.slice(at + 'node_modules/'.length).split('/');
  const name = rest[0]!.startsWith('@') ? rest.slice(0, 2) : rest.slice(0, 1);
  return input.slice(0, at) + ['node_modules', ...name].join('/');
}

/**
 * The packages with code in the output `bundle` (a key of metafile.outputs), each once, by
 * folder; `read` gives a folder's package.json.
 */
export function bundledPackages(
  metafile: Metafile,
  bundle: string,
  read: (dir: string) => BundledPackage['packageJson'],
): BundledPackage[] {
  const output = metafile.outputs[bundle];
  if (!output) throw new Error(`the metafile has no output ${bundle} (it has ${Object.keys(metafile.outputs).join(', ')})`);
  const dirs = new Set<string>();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    const dir = bytesInOutput > 0 ? packageDir(input) : undefined;
    if (dir) dirs.add(dir);
  }
  return [...dirs].sort().map((dir) => ({ dir, packageJson: read(dir) }));
}

export const readPackageJson =
  (root: string) =>
  (dir: string): BundledPackage['packageJson'] =>
    JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')) as BundledPackage['packageJson'];

/** One platform's image: what its base holds besides the bundle. */
export interface PlatformContents {
  /** `linux/amd64` */
  platform: string;
  architecture: string;
  /** The platform's image manifest digest. */
  digest: string;
  node: LockedNode & { sha256: string };
  /** The Debian packages, with how many of their files the image keeps. */
  debs: Array<LockedDeb & { files: number }>;
  /** Files the build wrote (not from a package): image path, SHA-256, and what they are made of. */
  generated: Array<{ path: string; sha256: string; from: string }>;
}

export interface SbomInputs {
  provenance: Provenance;
  description: string;
  /** The image's repository (no tag) and manifest digest. */
  repository: string;
  digest: string;
  bundle: { path: string; sha256: string };
  packages: BundledPackage[];
  /** The Debian release of the base (`12`). */
  debianVersion: string;
  platforms: PlatformContents[];
}

const npmPurl = (name: string, version: string): string => {
  const [scope, bare] = name.startsWith('@') ? (name.split('/') as [string, string]) : [undefined, name];
  return new PackageURL('npm', scope, bare, version, undefined, undefined).toString();
};

/** A UUID (RFC 9562 layout, version 5 bits) derived from `seed`, so one image has one serial number. */
function derivedUuid(seed: string): string {
  const h = createHash('sha256').update(seed).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

export function makeBom(i: SbomInputs): Models.Bom {
  const licenses = new Contrib.License.Factories.LicenseFactory(spdxExpressionParse);
  const components = new Contrib.FromNodePackageJson.Builders.ComponentBuilder(
    new Contrib.FromNodePackageJson.Factories.ExternalReferenceFactory(),
    licenses,
  );
  const bom = new Models.Bom({ serialNumber: `urn:uuid:${derivedUuid(i.digest)}` });

  const imagePurl = new PackageURL('oci', undefined, i.repository.split('/').pop()!, i.digest, {
    repository_url: i.repository,
    tag: i.provenance.version,
  }).toString();
  const image = new Models.Component(Enums.ComponentType.Container, i.repository, {
    bomRef: imagePurl,
    purl: imagePurl,
    version: i.provenance.version,
    description: i.description,
    licenses: new Models.LicenseRepository([licenses.makeFromString('Apache-2.0')]),
    externalReferences: new Models.ExternalReferenceRepository([
      new Models.ExternalReference(`${SOURCE_URL}/tree/${i.provenance.revision}`, Enums.ExternalReferenceType.VCS),
    ]),
  });
  bom.metadata.component = image;
  bom.metadata.timestamp = new Date(i.provenance.created);

  const bundle = new Models.Component(Enums.ComponentType.Application, `${TITLE}.js`, {
    bomRef: 'bundle',
    version: i.provenance.version,
    description: 'The operator: one esbuild bundle at /app/echoperator.js',
    hashes: new Models.HashDictionary([[Enums.HashAlgorithm['SHA-256'], i.bundle.sha256]]),
    licenses: new Models.LicenseRepository([licenses.makeFromString('Apache-2.0')]),
  });
  for (const p of i.packages) {
    const c = components.makeComponent(p.packageJson, Enums.ComponentType.Library);
    if (!c) throw new Error(`${p.dir}/package.json: no name or version`);
    c.purl = npmPurl(p.packageJson.name, p.packageJson.version);
    c.bomRef.value = c.purl;
    c.externalReferences.clear(); // the registry's metadata, not what the bundle holds
    bom.components.add(c);
    bundle.dependencies.add(c.bomRef);
  }

  const sha256 = (hex: string) => new Models.HashDictionary([[Enums.HashAlgorithm['SHA-256'], hex]]);
  const platformProperty = (platform: string) => new Models.PropertyRepository([new Models.Property(PLATFORM_PROPERTY, platform)]);
  const debs = new Map<string, Models.Component>();
  for (const p of i.platforms) {
    const platformPurl = new PackageURL('oci', undefined, i.repository.split('/').pop()!, p.digest, {
      arch: p.architecture,
      repository_url: i.repository,
    }).toString();
    const platformImage = new Models.Component(Enums.ComponentType.Container, `${i.repository} (${p.platform})`, {
      bomRef: platformPurl,
      purl: platformPurl,
      version: i.provenance.version,
      description: `The image for ${p.platform}: the bundle on Node and Debian ${i.debianVersion} packages`,
      properties: platformProperty(p.platform),
    });
    const nodePurl = new PackageURL('generic', undefined, 'node', p.node.version, {
      arch: p.architecture,
      download_url: p.node.tarball,
    }).toString();
    const node = new Models.Component(Enums.ComponentType.Platform, 'node', {
      bomRef: nodePurl,
      purl: nodePurl,
      version: p.node.version,
      description:
        `Node.js ${p.node.version}'s official binary at /${NODE_PATH}, from the npm package ${p.node.package}@${p.node.version} ` +
        `(tarball integrity ${p.node.integrity})`,
      hashes: sha256(p.node.sha256),
      licenses: new Models.LicenseRepository([licenses.makeFromString('MIT')]),
      cpe: `cpe:2.3:a:nodejs:node.js:${p.node.version}:*:*:*:*:*:*:*`,
      externalReferences: new Models.ExternalReferenceRepository([
        new Models.ExternalReference(p.node.tarball, Enums.ExternalReferenceType.Distribution, {
          comment: `npm ${p.node.package}@${p.node.version}, integrity ${p.node.integrity}`,
        }),
      ]),
      properties: platformProperty(p.platform),
    });
    bom.components.add(node);
    platformImage.dependencies.add(node.bomRef);
    platformImage.dependencies.add(bundle.bomRef);
    for (const d of p.debs) {
      const purl = new PackageURL('deb', 'debian', d.name, d.version, {
        arch: d.architecture,
        distro: `debian-${i.debianVersion}`,
      }).toString();
      let deb = debs.get(purl);
      if (!deb) {
        deb = new Models.Component(Enums.ComponentType.Library, d.name, {
          bomRef: purl,
          purl,
          version: d.version,
          description: `Debian ${i.debianVersion} package ${d.filename}: ${d.files} of its files in the image (no manuals, changelogs, lintian files)`,
          hashes: sha256(d.sha256),
          externalReferences: new Models.ExternalReferenceRepository([
            new Models.ExternalReference(d.url, Enums.ExternalReferenceType.Distribution, {
              comment: `${d.filename}, SHA-256 ${d.sha256}`,
            }),
          ]),
          ...(d.architecture === 'all' ? {} : { properties: platformProperty(p.platform) }),
        });
        debs.set(purl, deb);
        bom.components.add(deb);
      }
      platformImage.dependencies.add(deb.bomRef);
    }
    for (const g of p.generated) {
      const file = new Models.Component(Enums.ComponentType.File, `/${g.path}`, {
        bomRef: `file:${p.platform}:/${g.path}`,
        description: `Written by the build (${p.platform}) from ${g.from}`,
        hashes: sha256(g.sha256),
        properties: platformProperty(p.platform),
      });
      bom.components.add(file);
      platformImage.dependencies.add(file.bomRef);
    }
    bom.components.add(platformImage);
    image.dependencies.add(platformImage.bomRef);
  }
  bom.components.add(bundle);
  image.dependencies.add(bundle.bomRef);
  return bom;
}

export function serializeBom(bom: Models.Bom): string {
  const serializer = new Serialize.JsonSerializer(new Serialize.JSON.Normalize.Factory(Spec.Spec1dot6));
  return `${serializer.serialize(bom, { sortLists: true, space: 2 })}\n`;
}

/** Checks the JSON against CycloneDX 1.6's schema (the library's strict validator); throws what is wrong. */
export async function validateBom(json: string): Promise<void> {
  // ValidationError is `any` in the library's types: only its JSON is used.
  const error: unknown = await new Validation.JsonStrictValidator(Spec.Version.v1dot6).validate(json);
  if (error !== null) throw new Error(`the SBOM is not valid CycloneDX 1.6: ${JSON.stringify(error)}`);
}
