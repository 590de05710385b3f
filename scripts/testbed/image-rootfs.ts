/**
 * An image's files written to a folder and its Entrypoint started from there, through the image's
 * own dynamic loader and libraries (not the machine's), with the image's Env: the image's
 * programs, run without a container runtime, for the benches (start-up as the image runs it) and
 * for tests of what the image holds. Only the root differs: absolute symlinks and the /app paths
 * of the Entrypoint and Env are rewritten under the folder (the entrypoint finds the bundle and its
 * code cache beside itself, and V8 accepts the cache under any path).
 */
import { chmodSync, copyFileSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import type { ImageEntry, ImageSpec } from '../ship/image/images.js';

/** Writes the image's entries under `root` (which must be empty); files keep their mode's read and execute bits. */
export function materializeImage(spec: ImageSpec, root: string): void {
  const entries: ImageEntry[] = [...spec.entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  for (const e of entries) {
    const path = join(root, e.path);
    if (e.type === 'dir') mkdirSync(path, { recursive: true });
    else if (e.type === 'symlink') symlinkSync(e.target!.startsWith('/') ? join(root, e.target!) : e.target!, path);
    else {
      if (e.source) copyFileSync(e.source, path);
      else writeFileSync(path, e.content ?? '');
      chmodSync(path, (e.mode & 0o555) | 0o200);
    }
  }
}

/**
 * The argv that runs the image's Entrypoint from `root` (materializeImage) with the image's Env:
 * `env VAR=... <loader> --library-path <lib dirs> <program> <args>`.
 */
export function imageEntrypointArgv(spec: ImageSpec, root: string): string[] {
  const underRoot = (value: string): string =>
    value.replace(/(^|[=:])(\/app\b)/g, (_, sep: string, path: string) => `${sep}${join(root, path)}`);
  const env = (spec.config.Env ?? []).map(underRoot);
  const searchPath =
    (spec.config.Env ?? [])
      .find((kv) => kv.startsWith('PATH='))
      ?.slice(5)
      .split(':') ?? [];
  const [program, ...args] = spec.config.Entrypoint ?? [];
  if (!program) throw new Error(`image ${spec.tag} has no Entrypoint`);
  const has = (path: string): boolean => spec.entries.some((e) => e.path === path.replace(/^\//, ''));
  const resolved = program.includes('/') ? program : searchPath.map((d) => posix.join(d, program)).find(has);
  if (!resolved) throw new Error(`image ${spec.tag}: ${program} is on none of its PATH (${searchPath.join(':')})`);
  const loader = spec.entries.find(
    (e) => e.type === 'file' && /^(usr\/)?lib(64)?\/([^/]+-linux-gnu\/)?ld-linux[^/]*\.so\.\d+$/.test(e.path),
  );
  if (!loader) throw new Error(`image ${spec.tag} holds no glibc dynamic loader`);
  const libDirs = [...new Set(spec.entries.filter((e) => /\.so(\.\d+)*$/.test(e.path)).map((e) => join(root, posix.dirname(e.path))))];
  return ['env', ...env, join(root, loader.path), '--library-path', libDirs.join(':'), join(root, resolved), ...args.map(underRoot)];
}
