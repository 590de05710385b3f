/**
 * The release's SBOM, CycloneDX 1.6 JSON, made and checked with the CycloneDX library
 * (@cyclonedx/cyclonedx-library): what the image holds, and nothing it does not.
 *
 * - the npm packages whose code is inside the bundle: esbuild's metafile lists, for the bundle,
 *   every input file with the bytes it put in; a package counts when one of its files put any
 *   (a package that is imported but tree-shaken away is not in the image); name, version and
 *   license come from its package.json in node_modules, the purl is npm's;
 * - the bundle itself (its sha-256), and the Node runtime that runs it, with the Debian packages
 *   its shared libraries come from (the image's stand-in for the distroless base).
 *
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
import { SOURCE_URL, TITLE } from './labels.js';
import type { Provenance } from './provenance.js';

export const SBOM_FILE = 'sbom.cdx.json';

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

/** A Debian package a file of the image comes from. */
export interface DebianPackage {
  name: string;
  version: string;
  architecture: string;
  /** The image's files from it. */
  files: string[];
}

export interface SbomInputs {
  provenance: Provenance;
  description: string;
  /** The image's repository (no tag) and manifest digest. */
  repository: string;
  digest: string;
  bundle: { path: string; sha256: string };
  packages: BundledPackage[];
  node: { version: string; debianPackages: DebianPackage[] };
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

  const nodePurl = new PackageURL('generic', undefined, 'node', i.node.version, {
    download_url: `https://nodejs.org/dist/v${i.node.version}/`,
  }).toString();
  const node = new Models.Component(Enums.ComponentType.Platform, 'node', {
    bomRef: nodePurl,
    purl: nodePurl,
    version: i.node.version,
    description: 'Node.js at /nodejs/bin/node: the runtime the bundle runs on',
    licenses: new Models.LicenseRepository([licenses.makeFromString('MIT')]),
    cpe: `cpe:2.3:a:nodejs:node.js:${i.node.version}:*:*:*:*:*:*:*`,
  });
  for (const d of i.node.debianPackages) {
    const purl = new PackageURL('deb', 'debian', d.name, d.version, { arch: d.architecture }).toString();
    const lib = new Models.Component(Enums.ComponentType.Library, d.name, {
      bomRef: purl,
      purl,
      version: d.version,
      description: `the image's ${d.files.map((f) => `/${f}`).join(', ')}`,
    });
    bom.components.add(lib);
    node.dependencies.add(lib.bomRef);
  }
  bom.components.add(bundle);
  bom.components.add(node);
  bundle.dependencies.add(node.bomRef);
  image.dependencies.add(bundle.bomRef);
  image.dependencies.add(node.bomRef);
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
