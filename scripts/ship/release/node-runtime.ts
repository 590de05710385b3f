/**
 * The Node runtime inside an operator image spec: the version of its /nodejs/bin/node, and the
 * Debian packages its shared libraries come from (dpkg's database on this machine, which built
 * the image), for the SBOM.
 */
import { spawnSync } from 'node:child_process';
import type { ImageSpec } from '../image/images.js';
import type { DebianPackage } from './sbom.js';

export const NODE_PATH = 'nodejs/bin/node';

function run(command: string, args: string[]): { ok: boolean; out: string } {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  return { ok: r.status === 0, out: r.stdout ?? '' };
}

/** The package owning the file (by its path in the image, then by the host file it was copied from). */
function owner(paths: string[]): { name: string; version: string; architecture: string } | undefined {
  for (const path of paths) {
    const found = run('dpkg-query', ['-S', path]);
    const name = found.ok ? /^([^:,\s]+)(?::\S+)?:\s/.exec(found.out)?.[1] : undefined;
    if (!name) continue;
    const [version, architecture] = run('dpkg-query', ['-W', '-f', '${Version} ${Architecture}', name]).out.trim().split(' ');
    if (version && architecture) return { name, version, architecture };
  }
  return undefined;
}

export function nodeRuntime(spec: ImageSpec): { version: string; debianPackages: DebianPackage[] } {
  const node = spec.entries.find((e) => e.path === NODE_PATH)?.source;
  if (!node) throw new Error(`the image has no ${NODE_PATH}`);
  const version = run(node, ['--version']).out.trim().replace(/^v/, '');
  if (!/^\d+\.\d+\.\d+$/.test(version)) throw new Error(`${node} --version said ${JSON.stringify(version)}`);
  const packages = new Map<string, DebianPackage>();
  // The files the spec copies from the host besides node and the bundle: node's shared libraries.
  for (const e of spec.entries) {
    if (!e.source || e.path === NODE_PATH || !/\.so(\.|$)/.test(e.path)) continue;
    const pkg = owner([`/${e.path}`, e.source]);
    if (!pkg) throw new Error(`/${e.path} (${e.source}) belongs to no Debian package: the SBOM cannot name it`);
    const known = packages.get(pkg.name) ?? { ...pkg, files: [] };
    known.files.push(e.path);
    packages.set(pkg.name, known);
  }
  return { version, debianPackages: [...packages.values()].sort((a, b) => a.name.localeCompare(b.name)) };
}
