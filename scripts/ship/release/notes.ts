/**
 * README.md of a release folder: what the version changed (its CHANGELOG section), what each file
 * is, what the image is built from, and how to install from them.
 */
import { IMAGE_REPOSITORY } from '../../../infra/props.js';
import type { ImageLock } from '../image/lock.js';
import type { ChangelogSection } from './changelog.js';
import { importFlags, type ReleaseImage } from './image.js';
import { CRDS_FILE, INSTALL_FILE } from './manifests.js';
import type { Provenance } from './provenance.js';
import { SBOM_FILE } from './sbom.js';
import { SUMS_FILE } from './sums.js';

export const NOTES_FILE = 'README.md';

export interface NotesInputs {
  provenance: Provenance;
  archive: string;
  /** The packaged Helm chart's file name. */
  chart: string;
  image: Pick<ReleaseImage, 'digest' | 'platforms'>;
  lock: ImageLock;
  /** CHANGELOG.md's section of this version. */
  changes: ChangelogSection;
}

export function releaseNotes(n: NotesInputs): string {
  const p = n.provenance;
  const pinned = `${IMAGE_REPOSITORY}@${n.image.digest}`;
  const platforms = Object.entries(n.image.platforms)
    .map(([platform, digest]) => `| ${platform} | \`${digest}\` |`)
    .join('\n');
  const debs = [...new Set(n.lock.packages.map((d) => `${d.name} ${d.version}`))].join(', ');
  const node = n.lock.node.amd64;
  return `# echoperator ${p.version}

Built from commit ${p.revision} (${p.created}) by \`npm run release\`.

## What changed (${n.changes.date}, from CHANGELOG.md)

${n.changes.body}

## The files

| file | what it is |
| --- | --- |
| \`${n.archive}\` | the operator image, an OCI archive of an image index: \`${IMAGE_REPOSITORY}:${p.version}\`, digest \`${n.image.digest}\` |
| \`${CRDS_FILE}\` | the CustomResourceDefinitions (Echo, ScheduledEcho) |
| \`${INSTALL_FILE}\` | everything else of the default install, the image pinned as \`${pinned}\` |
| \`${n.chart}\` | the Helm chart (the CRDs as templates: \`crds.enabled\`, \`crds.keep\`); its default image is this digest, as in \`${INSTALL_FILE}\` |
| \`${SBOM_FILE}\` | CycloneDX 1.6 SBOM: the npm packages inside the bundle, the bundle, and per platform Node and the Debian packages, each with its SHA-256 and origin |
| \`${SUMS_FILE}\` | sha256 of every other file: \`sha256sum -c ${SUMS_FILE}\` |

## The image

One image per platform under the index:

| platform | image manifest |
| --- | --- |
${platforms}

The bundle at \`/app/echoperator.js\`, run as \`node /app/start.js\` (from its code cache) by user 65532, as the
Dockerfile's final stage lays it out, on a base assembled as distroless' \`nodejs${node.version.split('.')[0]}-debian${n.lock.debian.version}\`
is: Debian ${n.lock.debian.version} (${n.lock.debian.codename}) packages fetched by name, version and
SHA-256 (${debs}), unpacked without their manuals and changelogs, with a package database in
\`/var/lib/dpkg/status.d/\` that scanners read; Node ${node.version}'s official binary at
\`/nodejs/bin/node\` (npm \`${node.package}\` and \`${n.lock.node.arm64.package}\`, checked by their
integrity); distroless' users and folders; no shell, no package manager. The inputs are pinned in
\`scripts/ship/image/lock.json\` of the source tree: the same lock gives the same digests. Its labels
(\`org.opencontainers.image.*\`) give the source, version, revision, licenses and created time (the
commit's).

Put it where your nodes pull from, keeping the digest, e.g.
\`skopeo copy --all oci-archive:${n.archive} docker://${IMAGE_REPOSITORY}:${p.version}\`; or import it
into a node's containerd (these flags name it by digest too, as \`${INSTALL_FILE}\` refers to it):

    ctr --namespace k8s.io images import ${importFlags(IMAGE_REPOSITORY).join(' ')} ${n.archive}

## Install

    kubectl apply --server-side -f ${CRDS_FILE}
    kubectl apply --server-side -f ${INSTALL_FILE}

or with Helm:

    helm install echoperator ./${n.chart} -n echoperator --create-namespace
`;
}
