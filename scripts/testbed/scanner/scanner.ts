/**
 * The scanner (gomod/main.go, built from the Go module proxy): what syft sees in an image. It runs
 * syft's own dpkg-db and binary-classifier catalogers, the two that read this image (the Debian
 * package database in /var/lib/dpkg/status.d/, Node's binary), on the image's flattened
 * filesystem; not syft's CLI, whose every cataloger and image provider would make its cold build
 * several times longer. The tests compare its packages with the release's SBOM, so the SBOM says
 * what the image holds as a scanner reads it.
 */
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureOwnGoBinaries } from '../../ship/gobuild.js';

export async function ensureScanner(log: (line: string) => void = (l) => console.error(l)): Promise<string> {
  const module = join(dirname(fileURLToPath(import.meta.url)), 'gomod');
  const [scanner] = await ensureOwnGoBinaries(
    module,
    { name: 'scanner', packages: ['.'], binaries: ['scanner'], describe: "the scanner (syft's dpkg and binary catalogers)" },
    log,
  );
  return scanner!;
}

export interface ScannedPackage {
  name: string;
  version: string;
  /** syft's package type: `deb`, `binary`, ... */
  type: string;
}

export interface ScanOptions {
  /** `linux/amd64`, `linux/arm64`: the image of an index to read. */
  platform: string;
  /** A `registry:` source reached over plain HTTP (the test bed's loopback registry). */
  plainHttp?: boolean;
}

/**
 * The packages the scanner finds in `source`: `registry:host/repo@sha256:...`, `oci-archive:/path.tar`,
 * `oci-dir:/layout` or `dir:/rootfs`.
 */
export function scan(scanner: string, source: string, opts: ScanOptions): ScannedPackage[] {
  const args = ['--platform', opts.platform, ...(opts.plainHttp ? ['--plain-http'] : []), source];
  const r = spawnSync(scanner, args, { encoding: 'utf8', maxBuffer: 64 << 20, timeout: 600_000 });
  if (r.status !== 0) throw new Error(`scanner ${args.join(' ')}: ${(r.stderr || r.error?.message || '').trim()}`);
  return (JSON.parse(r.stdout) as { artifacts: ScannedPackage[] }).artifacts;
}
