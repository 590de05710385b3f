/**
 * A folder laid out as the kubelet writes a Secret volume (cert-manager's tls.crt / tls.key):
 * versioned folders behind a `..data` symlink that an update swaps atomically, the files reached
 * through it. Removed when the test ends.
 */
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface KeyPair {
  cert: string;
  key: string;
}

export interface SecretVolume {
  dir: string;
  /** Writes a new version and swaps `..data` to it, as a Secret update does. */
  rotate: (pair: KeyPair) => void;
}

export function tlsSecretVolume(t: { after(fn: () => unknown): void }, first: KeyPair): SecretVolume {
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-tls-secret-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  let n = 0;
  const rotate = (pair: KeyPair): void => {
    const version = `..2026_11_25_${n++}`;
    mkdirSync(join(dir, version));
    writeFileSync(join(dir, version, 'tls.crt'), pair.cert);
    writeFileSync(join(dir, version, 'tls.key'), pair.key, { mode: 0o600 });
    symlinkSync(version, join(dir, '..data_tmp'));
    renameSync(join(dir, '..data_tmp'), join(dir, '..data'));
  };
  rotate(first);
  symlinkSync('..data/tls.crt', join(dir, 'tls.crt'));
  symlinkSync('..data/tls.key', join(dir, 'tls.key'));
  return { dir, rotate };
}
