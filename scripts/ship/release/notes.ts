/**
 * README.md of a release folder: what the version changed (its CHANGELOG section), what each file
 * is, how to install from them, and what the image is built on, since it is not the Dockerfile's
 * distroless base (see image.ts).
 */
import { IMAGE_REPOSITORY } from '../../../infra/props.js';
import type { ChangelogSection } from './changelog.js';
import { importFlags } from './image.js';
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
  digest: string;
  node: { version: string; debianPackages: { name: string; version: string }[] };
  /** CHANGELOG.md's section of this version. */
  changes: ChangelogSection;
}

export function releaseNotes(n: NotesInputs): string {
  const p = n.provenance;
  const pinned = `${IMAGE_REPOSITORY}@${n.digest}`;
  const libs = n.node.debianPackages.map((d) => `${d.name} ${d.version}`).join(', ');
  return `# echoperator ${p.version}

Built from commit ${p.revision} (${p.created}) by \`npm run release\`.

## What changed (${n.changes.date}, from CHANGELOG.md)

${n.changes.body}

## The files

| file | what it is |
| --- | --- |
| \`${n.archive}\` | the operator image, an OCI archive: \`${IMAGE_REPOSITORY}:${p.version}\`, digest \`${n.digest}\` |
| \`${CRDS_FILE}\` | the CustomResourceDefinitions (Echo, ScheduledEcho) |
| \`${INSTALL_FILE}\` | everything else of the default install, the image pinned as \`${pinned}\` |
| \`${n.chart}\` | the Helm chart (the CRDs as templates: \`crds.enabled\`, \`crds.keep\`); its default image is this digest, as in \`${INSTALL_FILE}\` |
| \`${SBOM_FILE}\` | CycloneDX 1.6 SBOM: the npm packages inside the bundle, the bundle, Node and its libraries |
| \`${SUMS_FILE}\` | sha256 of every other file: \`sha256sum -c ${SUMS_FILE}\` |

## The image

The bundle at \`/app/echoperator.js\`, run as \`node /app/echoperator.js\` by user 65532, as the
Dockerfile's final stage lays it out. Its base is NOT \`gcr.io/distroless/nodejs*\`: it is Node
${n.node.version} at \`/nodejs/bin/node\` with the shared libraries
of the machine that built it (Debian: ${libs}), distroless' users and folders, and nothing else
(no shell, no package manager). Its labels (\`org.opencontainers.image.*\`) give the source,
version, revision, licenses and created time (the commit's).

Put it where your nodes pull from, keeping the digest, e.g.
\`skopeo copy oci-archive:${n.archive} docker://${IMAGE_REPOSITORY}:${p.version}\`; or import it
into a node's containerd (these flags name it by digest too, as \`${INSTALL_FILE}\` refers to it):

    ctr --namespace k8s.io images import ${importFlags(IMAGE_REPOSITORY).join(' ')} ${n.archive}

## Install

    kubectl apply --server-side -f ${CRDS_FILE}
    kubectl apply --server-side -f ${INSTALL_FILE}

or with Helm:

    helm install echoperator ./${n.chart} -n echoperator --create-namespace
`;
}
