/**
 * syft (gomod/, built from the Go module proxy): what a scanner sees in an image. The tests compare
 * its packages with the release's SBOM, so the SBOM says what the image holds as a scanner reads it
 * (the Debian package database in /var/lib/dpkg/status.d/, Node's binary).
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinnedVersion, resolveCached, type BuildGroup } from '../../ship/gobuild.js';

const MODULE = 'github.com/anchore/syft';

export async function ensureSyft(log: (line: string) => void = (l) => console.error(l)): Promise<string> {
  const module = join(dirname(fileURLToPath(import.meta.url)), 'gomod');
  const version = pinnedVersion(module, MODULE);
  const group: BuildGroup = {
    module,
    key: `syft-${version}`,
    packages: [`${MODULE}/cmd/syft`],
    binaries: ['syft'],
    ldflags: `-s -w -X main.version=${version}`,
    describe: `syft ${version}`,
  };
  return resolveCached(group, 'syft', log);
}

export interface ScannedPackage {
  name: string;
  version: string;
  /** syft's package type: `deb`, `binary`, `npm`, ... */
  type: string;
}

/** The packages syft finds in `source` (e.g. `oci-archive:/path.tar`, `registry:host/repo@sha256:...`) for one platform. */
export function scan(syft: string, source: string, platform: string, env: Record<string, string> = {}): ScannedPackage[] {
  const r = spawnSync(syft, ['scan', source, '--platform', platform, '-o', 'syft-json', '-q'], {
    encoding: 'utf8',
    maxBuffer: 256 << 20,
    timeout: 600_000,
    env: { ...process.env, SYFT_CHECK_FOR_APP_UPDATE: 'false', ...env },
  });
  if (r.status !== 0) throw new Error(`syft scan ${source}: ${(r.stderr || r.error?.message || '').trim()}`);
  const doc = JSON.parse(r.stdout) as { artifacts: ScannedPackage[] };
  return doc.artifacts.map((a) => ({ name: a.name, version: a.version, type: a.type }));
}
