/**
 * Mutants: our operator with one known bug re-implanted, to prove the campaign can fail (the
 * issue's mutation score). Each is one patch in scripts/lab/faults/mutants/patches/<name>.patch against
 * src/ at HEAD, applied to a scratch copy of HEAD's tree (never to the working tree) and bundled
 * by that copy's own `npm run build` (scripts/ship/build.ts).
 *
 * Guarantees: a bundle is built once per (patch content, HEAD's src/ tree) into
 * <cache>/mutants/<name>-<patch sha>-<src sha>/ and reused; a build that fails leaves nothing in
 * the cache (it is renamed into place only when complete) and stops with git's or esbuild's words.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot } from '../../../ship/gobuild.js';
import { log } from '../../bench/log.js';
import { ROOT } from '../programs/replica.js';
import type { FaultClass } from '../programs/types.js';

/**
 * The bugs, one per patch file (one hunk each: one bug alone), and the fault classes whose
 * schedules are meant to find it: a mutant is scored against the whole of those classes, and its
 * kill rate is the share of their effective schedules that found a violation. The unit test holds
 * this list equal to the folder.
 */
export const MUTANT_CLASSES = {
  /** No look in the Jobs cache for this generation's Job (the deterministic name and AlreadyExists may stand in for it). */
  'no-index-check': ['stale', 'intermediate'],
  /** The Job's name carries the process id: two replicas name one run's Job apart. */
  'nondeterministic-name': ['stale', 'intermediate'],
  /** A run starts on the cache's word, without the conditional claim confirming it. */
  'no-read-your-writes': ['stale'],
  /** A previous message's Job is deleted on the cache's word, without the live check. */
  'no-live-check-before-delete': ['stale'],
  /** Status written without the resourceVersion: the claim no longer fails on a stale copy. */
  'status-without-rv': ['stale', 'intermediate'],
  /** No fence at the renew deadline. */
  'write-after-renew-deadline': ['partition'],
  /** The fence is there, but falls a lease duration after the renew deadline. */
  'late-fence': ['partition'],
  /** A renewal retried after Retry-After dates the hold from its first try (the bug overload found). */
  'hold-from-first-try': ['overload'],
  /** A 410 resumes the watch from the server's current resourceVersion instead of re-listing. */
  'trust-watch-after-gap': ['unobserved'],
} as const satisfies Record<string, readonly FaultClass[]>;

export type MutantName = keyof typeof MUTANT_CLASSES;
export const MUTANTS = Object.keys(MUTANT_CLASSES) as MutantName[];

export const MUTANTS_DIR = join(dirname(fileURLToPath(import.meta.url)), 'patches');

export function mutantPatch(name: string): string {
  if (!(MUTANTS as readonly string[]).includes(name)) throw new Error(`unknown mutant "${name}": one of ${MUTANTS.join(', ')}`);
  return join(MUTANTS_DIR, `${name}.patch`);
}

function run(cmd: string, args: string[], cwd: string, what: string): string {
  const r = spawnSync(cmd, args, { cwd, encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`${what} failed (${cmd} ${args.join(' ')}): ${(r.stderr || r.stdout || String(r.error)).trim()}`);
  return r.stdout;
}

/** A scratch copy of HEAD's tree (committed files only) in a new temporary folder; the caller removes it. */
export function headTree(): string {
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-mutant-'));
  run('sh', ['-c', `git -C '${ROOT}' archive HEAD | tar -x -C '${dir}'`], ROOT, 'extracting HEAD');
  return dir;
}

/** Applies mutant `name`'s patch to the tree at `dir` (only checks, with `check`); throws git's message if it does not apply. */
export function applyMutant(name: string, dir: string, opts: { check?: boolean } = {}): void {
  run('git', ['apply', ...(opts.check ? ['--check'] : []), mutantPatch(name)], dir, `applying mutant ${name} to HEAD`);
}

const sha12 = (data: string | Buffer): string => createHash('sha256').update(data).digest('hex').slice(0, 12);

/** The folder holding mutant `name`'s bundle (echoperator.js), built when missing. */
export function buildMutant(name: string): string {
  const patchSha = sha12(readFileSync(mutantPatch(name)));
  const srcSha = run('git', ['rev-parse', 'HEAD:src'], ROOT, 'reading HEAD').trim().slice(0, 12);
  const out = join(cacheRoot(), 'mutants', `${name}-${patchSha}-${srcSha}`);
  if (existsSync(join(out, 'echoperator.js'))) return out;
  log(`building mutant ${name} (HEAD's src/ ${srcSha} + ${name}.patch ${patchSha})`);
  const dir = headTree();
  try {
    applyMutant(name, dir);
    symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'));
    run(process.execPath, ['--import', 'tsx', 'scripts/ship/build.ts'], dir, `bundling mutant ${name}`);
    const partial = `${out}.partial-${process.pid}`;
    mkdirSync(dirname(out), { recursive: true });
    cpSync(join(dir, 'dist', 'bundle'), partial, { recursive: true });
    rmSync(out, { recursive: true, force: true });
    renameSync(partial, out);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  return out;
}
