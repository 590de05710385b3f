/**
 * Publishing a release folder to an OCI registry, as `npm run release -- --push REGISTRY` does:
 * the image index under `REGISTRY/<image name>:<version>` (ocipush, every blob and manifest as
 * built, so the registry serves the release's digest), the chart as an OCI artifact at
 * `oci://REGISTRY/charts/echoperator:<version>` (`helm push`), then, with the key, the index and
 * each platform image signed by digest, and the SBOM (CycloneDX) and the SLSA provenance attested
 * to the index (cosign). Nothing is pushed by tag alone: the digest pushed must be the release's.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { ensureHelm } from '../helm/tool.js';
import { ensureImageTools } from '../image/tools.js';
import { attestImage, signImage, type CosignOptions } from '../sign/cosign.js';
import { pinnedReference } from './labels.js';
import { SBOM_FILE } from './sbom.js';
import { SLSA_FILE } from './slsa.js';

export interface PushInputs {
  dir: string;
  archive: string;
  chart: string;
  repository: string;
  version: string;
  digest: string;
  platforms: Record<string, string>;
}

export interface PushOptions {
  registry: string;
  plainHttp: boolean;
  /** cosign's private key (COSIGN_PASSWORD in cosign.env). */
  key: string;
  cosign: CosignOptions;
  log: (line: string) => void;
}

export interface Pushed {
  image: string;
  chart: string;
}

function run(command: string, args: string[]): string {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')}: ${(r.stderr || r.error?.message || '').trim()}`);
  return r.stdout;
}

/** A registry as --push takes it: host[:port] and an optional path, no scheme, no tag. */
export function checkRegistry(registry: string): string {
  if (!/^[a-z0-9.-]+(:\d+)?(\/[a-z0-9._/-]+)?$/.test(registry) || registry.endsWith('/'))
    throw new Error(`--push ${JSON.stringify(registry)}: want a registry as host[:port][/path], e.g. ghcr.io/mmontes11 or 127.0.0.1:5000`);
  return registry;
}

export async function pushRelease(r: PushInputs, o: PushOptions): Promise<Pushed> {
  const { ocipush } = await ensureImageTools(o.log);
  const http = o.plainHttp ? ['--plain-http'] : [];
  const pushed = JSON.parse(run(ocipush, [...http, join(r.dir, r.archive), `${r.repository}:${r.version}`])) as { digest: string };
  if (pushed.digest !== r.digest) throw new Error(`pushed ${pushed.digest}, but the release's image is ${r.digest}`);
  const image = pinnedReference(r.repository, r.digest);
  o.log(`push: ${r.repository}:${r.version} = ${image}`);

  const helm = await ensureHelm(o.log);
  const out = run(helm, ['push', join(r.dir, r.chart), `oci://${o.registry}/charts`, ...http]) + '';
  const chart = `oci://${o.registry}/charts/echoperator`;
  o.log(`push: chart ${chart} --version ${r.version} (${/Digest: (\S+)/.exec(out)?.[1] ?? 'pushed'})`);

  signImage(o.cosign, o.key, image);
  o.log(`sign: ${image} and its ${Object.keys(r.platforms).join(', ')} images, by digest`);
  attestImage(o.cosign, o.key, image, 'cyclonedx', join(r.dir, SBOM_FILE));
  attestImage(o.cosign, o.key, image, 'slsaprovenance1', join(r.dir, SLSA_FILE));
  o.log(`attest: ${SBOM_FILE} (cyclonedx) and ${SLSA_FILE} (slsaprovenance1) to ${image}`);
  return { image, chart };
}
