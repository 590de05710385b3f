/**
 * The release image's identity: its OCI labels (image-spec annotations.md's pre-defined keys),
 * and the reference that pins it by digest. Pure functions of the provenance.
 */
import type { Provenance } from './provenance.js';

/** Where the source lives (org.opencontainers.image.source). */
export const SOURCE_URL = 'https://github.com/mmontes11/echoperator-ts';
export const LICENSES = 'Apache-2.0';
export const TITLE = 'echoperator';

/** The OCI labels of the release image, from the provenance and package.json's description. */
export function imageLabels(p: Provenance, description: string): Record<string, string> {
  return {
    'org.opencontainers.image.created': p.created,
    'org.opencontainers.image.description': description,
    'org.opencontainers.image.licenses': LICENSES,
    'org.opencontainers.image.revision': p.revision,
    'org.opencontainers.image.source': SOURCE_URL,
    'org.opencontainers.image.title': TITLE,
    'org.opencontainers.image.version': p.version,
  };
}

const DIGEST = /^sha256:[0-9a-f]{64}$/;

/** `repository@sha256:<digest>`: the reference that names exactly one image, whatever a tag later points at. */
export function pinnedReference(repository: string, digest: string): string {
  if (!DIGEST.test(digest)) throw new Error(`not an image digest: ${JSON.stringify(digest)} (want sha256:<64 hex digits>)`);
  if (repository.includes('@') || /:[^/]*$/.test(repository)) throw new Error(`${repository} is not a bare repository (no tag, no digest)`);
  return `${repository}@${digest}`;
}
