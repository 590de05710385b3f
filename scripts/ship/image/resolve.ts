/**
 * What a build does with a locked Debian package, given what this machine has and what apt serves.
 * Debian's archive keeps only the current version of a package (a point or security release
 * replaces the one before), so a lock ages: a version it names can stop being served.
 *
 * - A .deb the per-user cache holds (keyed by its SHA-256) is used as locked: a machine that
 *   fetched the lock's inputs once builds the lock's image for good.
 * - Else the locked version is fetched when apt serves it with the lock's SHA-256. Served with
 *   another SHA-256, it is refused by every build: that is not the package the lock names.
 * - Else (the archive dropped it) a `release` build refuses, since a release is its lock; a
 *   `development` build (the demo, the tests) takes apt's candidate and says loudly which package
 *   moved from which version to which, and how to refresh the lock.
 *
 * Pure: inputs.ts gathers the cache's and apt's answers and applies the choice.
 */
import { LOCK_FILE, type ImageLock, type LockedDeb } from './lock.js';

/** `release`: the lock or nothing (`npm run release`). `development`: the served version when the locked one is gone. */
export type InputsPolicy = 'release' | 'development';

/** The command that rewrites the lock from what apt serves. */
export const REFRESH_COMMAND = 'npm run image:lock';

export interface DebAvailability {
  /** A .deb with the lock's SHA-256 (or its unpacked files) is in the per-user cache. */
  cached: boolean;
  /** What apt's lists offer for the package's name and architecture, the candidate first. */
  served: LockedDeb[];
}

export type DebChoice =
  | { kind: 'locked'; deb: LockedDeb }
  | { kind: 're-resolved'; deb: LockedDeb; locked: LockedDeb; message: string }
  | { kind: 'refused'; message: string };

/** `libc6:arm64`, `tzdata` (architecture-independent). */
export const debSpec = (deb: Pick<LockedDeb, 'name' | 'architecture'>): string =>
  deb.architecture === 'all' ? deb.name : `${deb.name}:${deb.architecture}`;

const refresh = `Refresh the lock with \`${REFRESH_COMMAND}\` (on Debian, as root), review and commit ${LOCK_FILE.replace(/.*\/scripts\//, 'scripts/')}.`;

/** The package's choice under the policy. */
export function chooseDeb(locked: LockedDeb, availability: DebAvailability, policy: InputsPolicy): DebChoice {
  if (availability.cached) return { kind: 'locked', deb: locked };
  const spec = debSpec(locked);
  const same = availability.served.find((s) => s.version === locked.version);
  if (same && same.sha256 === locked.sha256 && same.size === locked.size) return { kind: 'locked', deb: locked };
  if (same)
    return {
      kind: 'refused',
      message: `${spec} ${locked.version}: apt serves it with SHA-256 ${same.sha256} (${same.size} bytes), the lock says ${locked.sha256} (${locked.size} bytes); not the package the lock names. ${refresh}`,
    };
  const candidate = availability.served[0];
  if (!candidate)
    return {
      kind: 'refused',
      message: `${spec} ${locked.version}: apt serves no version of ${spec} (is the architecture added and \`apt-get update\` run?)`,
    };
  const moved = `${spec} ${locked.version} -> ${candidate.version}`;
  const gone = "Debian's archive no longer serves the locked version.";
  if (policy === 'release') return { kind: 'refused', message: `${moved}: ${gone} A release builds from its lock only. ${refresh}` };
  return {
    kind: 're-resolved',
    deb: candidate,
    locked,
    message: `${moved}: ${gone} This development build uses ${candidate.version}, so its image is not the lock's. ${refresh}`,
  };
}

export interface ResolvedLock {
  /** The lock with each re-resolved package replaced: what the build uses. */
  lock: ImageLock;
  /** The re-resolved packages' messages, one each, for the build to print loudly. */
  warnings: string[];
}

/**
 * Applies chooseDeb to every package `availability` answers for (the others are kept as locked).
 * Throws with every refusal at once, one line each.
 */
export function resolveLock(
  lock: ImageLock,
  availability: (deb: LockedDeb) => DebAvailability | undefined,
  policy: InputsPolicy,
): ResolvedLock {
  const refusals: string[] = [];
  const warnings: string[] = [];
  const packages = lock.packages.map((deb) => {
    const known = availability(deb);
    if (!known) return deb;
    const choice = chooseDeb(deb, known, policy);
    if (choice.kind === 'refused') refusals.push(choice.message);
    if (choice.kind === 're-resolved') warnings.push(choice.message);
    return choice.kind === 'refused' ? deb : choice.deb;
  });
  if (refusals.length) throw new Error(`the image's locked inputs cannot be fetched (${refusals.length}):\n  ${refusals.join('\n  ')}`);
  return { lock: { ...lock, packages }, warnings };
}
