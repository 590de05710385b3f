/**
 * The release's manifests, made by the synth path itself (infra/: infra/values.yaml's defaults,
 * then `--set` as `npm run synth -- --set ...` takes it) with the image pinned by digest:
 * crds.yaml (the CRDs alone, applied first and never pruned) and install.yaml (everything else).
 */
import { CHART_NAME, CRDS_CHART_NAME, synthesizeFiles } from '../../../infra/chart.js';
import { valuesFromSources } from '../../../infra/values.js';

export const CRDS_FILE = 'crds.yaml';
export const INSTALL_FILE = 'install.yaml';

/** The `--set` arguments that pin the operator's image to one digest. */
export function pinnedImageSet(repository: string, digest: string): string[] {
  return [`image.repository=${repository}`, `image.digest=${digest}`];
}

/**
 * File name -> YAML text of the default install with the image pinned. The environment's
 * ECHOPERATOR_HA is ignored: a release is the defaults, whatever the shell that built it says.
 */
export function releaseManifests(repository: string, digest: string): Record<string, string> {
  const props = valuesFromSources({ set: pinnedImageSet(repository, digest) }, {});
  const files = synthesizeFiles(props);
  const crds = files[`${CRDS_CHART_NAME}.k8s.yaml`];
  const install = files[`${CHART_NAME}.k8s.yaml`];
  if (!crds || !install) throw new Error(`synth made ${Object.keys(files).join(', ')}: want the CRDs and the install apart`);
  return { [CRDS_FILE]: crds, [INSTALL_FILE]: install };
}
