/**
 * cosign (gomod/, built from the Go module proxy): signing the release. With a key only (a
 * `cosign generate-key-pair` key, its password in COSIGN_PASSWORD): this machine reaches no
 * Fulcio, Rekor or OIDC issuer, so nothing is uploaded to a transparency log (`--tlog-upload=false`)
 * and verification skips it (`--insecure-ignore-tlog`). docs/release.md gives the keyless
 * commands a publisher's CI runs instead.
 *
 * Every function here runs cosign and throws its stderr when it fails; a registry reached over
 * plain HTTP (the test bed's loopback registry) needs `plainHttp`.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pinnedVersion, resolveCached, type BuildGroup } from '../gobuild.js';

const MODULE = 'github.com/sigstore/cosign/v2';

export async function ensureCosign(log: (line: string) => void = (l) => console.error(l)): Promise<string> {
  const module = join(dirname(fileURLToPath(import.meta.url)), 'gomod');
  const version = pinnedVersion(module, MODULE);
  const group: BuildGroup = {
    module,
    key: `cosign-${version}`,
    packages: [`${MODULE}/cmd/cosign`],
    binaries: ['cosign'],
    ldflags: `-s -w -X sigs.k8s.io/release-utils/version.gitVersion=${version}`,
    describe: `cosign ${version}`,
  };
  return resolveCached(group, 'cosign', log);
}

export interface CosignOptions {
  cosign: string;
  plainHttp?: boolean;
  /** Added to cosign's environment (COSIGN_PASSWORD). */
  env?: Record<string, string>;
}

/** Runs cosign (answering yes to its prompts); whether it succeeded, and what it printed. */
export function cosign(o: CosignOptions, args: string[]): { ok: boolean; stdout: string; stderr: string } {
  const http = o.plainHttp && !['sign-blob', 'verify-blob', 'generate-key-pair'].includes(args[0]!) ? ['--allow-http-registry'] : [];
  const r = spawnSync(o.cosign, [...args, ...http], {
    encoding: 'utf8',
    timeout: 300_000,
    env: { ...process.env, COSIGN_YES: 'true', ...o.env },
  });
  return { ok: r.status === 0, stdout: r.stdout ?? '', stderr: (r.stderr || r.error?.message || '').trim() };
}

function must(o: CosignOptions, args: string[]): string {
  const r = cosign(o, args);
  if (!r.ok) throw new Error(`cosign ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

/** Signs the image (an index: and each of its platform images) at `ref` (`repo@sha256:...`) with the key. */
export function signImage(o: CosignOptions, key: string, ref: string): void {
  must(o, ['sign', '--key', key, '--tlog-upload=false', '--recursive', ref]);
}

/** Attests `predicate` (a file) of `type` (cyclonedx, slsaprovenance1, ...) to the image at `ref`. */
export function attestImage(o: CosignOptions, key: string, ref: string, type: string, predicate: string): void {
  must(o, ['attest', '--key', key, '--tlog-upload=false', '--type', type, '--predicate', predicate, ref]);
}

/** Signs a file; writes cosign's bundle (signature and key hint) to `bundle`. */
export function signBlob(o: CosignOptions, key: string, file: string, bundle: string): void {
  must(o, ['sign-blob', '--key', key, '--tlog-upload=false', '--bundle', bundle, file]);
}
