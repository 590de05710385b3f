/**
 * The release's SLSA provenance (https://slsa.dev/provenance/v1): the predicate that `cosign
 * attest --type slsaprovenance1` wraps in an in-toto statement whose subject is the image's
 * digest. It says what built the image from what: the commit, the lock file and its every input
 * (each Debian package and Node tarball with its digest), package-lock.json, and the build's
 * command. A function of the commit, like the rest of the release: the build's times are the
 * commit's, so two releases of one commit attest the same predicate.
 */
import type { ImageLock } from '../image/lock.js';
import { SOURCE_URL } from './labels.js';
import type { Provenance } from './provenance.js';

export const SLSA_FILE = 'provenance.slsa.json';
export const BUILD_TYPE = `${SOURCE_URL}/blob/main/docs/release.md#npm-run-release`;

export interface SlsaInputs {
  provenance: Provenance;
  lock: ImageLock;
  /** SHA-256 (hex) of scripts/ship/image/lock.json and package-lock.json as built. */
  lockSha256: string;
  packageLockSha256: string;
  /** Who ran the build (`npm run release` on a developer machine, or a CI's workflow URL). */
  builderId: string;
}

export function slsaPredicate(i: SlsaInputs): object {
  const sha512Hex = (integrity: string): string => Buffer.from(integrity.replace(/^sha512-/, ''), 'base64').toString('hex');
  return {
    buildDefinition: {
      buildType: BUILD_TYPE,
      externalParameters: { source: `git+${SOURCE_URL}@${i.provenance.revision}`, version: i.provenance.version },
      internalParameters: { command: 'npm run release' },
      resolvedDependencies: [
        { uri: `git+${SOURCE_URL}`, digest: { gitCommit: i.provenance.revision } },
        { name: 'scripts/ship/image/lock.json', digest: { sha256: i.lockSha256 } },
        { name: 'package-lock.json', digest: { sha256: i.packageLockSha256 } },
        ...i.lock.packages.map((d) => ({ uri: d.url, name: d.filename, digest: { sha256: d.sha256 } })),
        ...Object.values(i.lock.node).map((n) => ({
          uri: n.tarball,
          name: `${n.package}@${n.version}`,
          digest: { sha512: sha512Hex(n.integrity) },
        })),
      ],
    },
    runDetails: {
      builder: { id: i.builderId },
      metadata: {
        invocationId: `${i.provenance.revision}/${i.provenance.version}`,
        startedOn: i.provenance.created,
        finishedOn: i.provenance.created,
      },
    },
  };
}
