/**
 * Helm (gomod/): cmd/helm at the version the wrapper module pins, which the chart is packaged,
 * linted, rendered and installed with; the version is stamped in, so `helm version` reports it.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinnedVersion, resolveCached, type BuildGroup } from '../gobuild.js';

export async function ensureHelm(log: (line: string) => void = (l) => console.error(l)): Promise<string> {
  const module = join(dirname(fileURLToPath(import.meta.url)), 'gomod');
  const path = 'helm.sh/helm/v4';
  const version = pinnedVersion(module, path);
  const group: BuildGroup = {
    module,
    key: `helm-${version}`,
    packages: [`${path}/cmd/helm`],
    binaries: ['helm'],
    ldflags: `-s -w -X ${path}/internal/version.version=${version} -X ${path}/internal/version.gitTreeState=clean`,
    describe: `Helm ${version}`,
  };
  return resolveCached(group, 'helm', log);
}
