/**
 * A Go module's binaries, built once from the Go module proxy with the machine's Go into the
 * per-user cache (~/.cache/echoperator, or XDG_CACHE_HOME's), keyed by a version or by the module's
 * content. Every Go tool the project runs comes through here: the image tools and Helm that the
 * release uses, the control plane and add-ons of the test bed, the lab's peers.
 *
 * A build writes to a temporary folder and renames it into place, so an interrupted build never
 * leaves a half binary that a later run would trust; one build at a time per cache entry, across
 * processes. A binary found in KUBEBUILDER_ASSETS (envtest's folder) is used as it is, where the
 * caller allows it (resolveBinary).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync, readFileSync, linkSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { ControlPlaneError, formatDuration } from './errors.js';

/** Oldest Go that builds every pinned module (the newest `go` line: Kubernetes 1.37's, go 1.26.0). */
const MIN_GO = [1, 26] as const;

export function cacheRoot(): string {
  const base = process.env.XDG_CACHE_HOME || join(homedir(), '.cache');
  return join(base, 'echoperator');
}

export interface BuildGroup {
  /** Folder of the wrapper Go module that pins the sources. */
  module: string;
  /** Cache folder keyed by version; binaries live in its bin/. */
  key: string;
  packages: string[];
  binaries: string[];
  /** go names a binary after its package path without the major-version suffix; rename those. */
  renames?: Record<string, string>;
  /** Folders of a required module's source copied beside the binaries (e.g. the CRDs a controller ships). */
  copies?: { module: string; from: string; to: string }[];
  ldflags: string;
  describe: string;
  /** GOTOOLCHAIN for a module whose go line is newer than the local Go (the go command fetches it); else the local Go. */
  toolchain?: string;
}

/**
 * A Go module of our own sources (go.mod + go.sum pinning its dependencies), cached by its
 * content: an edit builds anew, an unchanged tree reuses the binaries.
 */
export function ownModuleGroup(module: string, name: string, packages: string[], binaries: string[], describe: string): BuildGroup {
  return { module, key: `${name}-${contentHash(module)}`, packages, binaries, ldflags: '-s -w', describe };
}

/**
 * The binaries of a Go module of ours outside the control plane (e.g. the benchmarks' peer),
 * built from the Go module proxy into the same per-user cache, keyed by the module's content.
 * Paths in the order of `binaries`.
 */
export async function ensureOwnGoBinaries(
  module: string,
  opts: { name: string; packages: string[]; binaries: string[]; describe: string },
  log: (line: string) => void = (l) => console.error(l),
): Promise<string[]> {
  const group = ownModuleGroup(module, opts.name, opts.packages, opts.binaries, opts.describe);
  const paths: string[] = [];
  for (const b of opts.binaries) paths.push(await resolveBinary(group, b, log));
  return paths;
}

function contentHash(dir: string): string {
  const hash = createHash('sha256');
  const walk = (d: string): void => {
    for (const name of readdirSync(d).sort()) {
      const path = join(d, name);
      if (statSync(path).isDirectory()) walk(path);
      else
        hash
          .update(`${path.slice(dir.length)}\0`)
          .update(readFileSync(path))
          .update('\0');
    }
  };
  walk(dir);
  return hash.digest('hex').slice(0, 12);
}

/**
 * The version a wrapper module pins for `path` (its go.mod `require` line): the one place a
 * version is written, so the cache key cannot drift from what is built.
 */
export function pinnedVersion(moduleDir: string, path: string): string {
  const goMod = readFileSync(join(moduleDir, 'go.mod'), 'utf8');
  const m = new RegExp(`^\\s*(?:require\\s+)?${path.replaceAll('.', '\\.')}\\s+(v\\S+)`, 'm').exec(goMod);
  if (!m) throw new ControlPlaneError(`${join(moduleDir, 'go.mod')} does not require ${path}.`);
  return m[1]!;
}

function cachedBinary(group: BuildGroup, name: string): string {
  return join(cacheRoot(), 'controlplane', group.key, 'bin', name);
}

function fromAssets(name: string): string | undefined {
  const dir = process.env.KUBEBUILDER_ASSETS;
  if (!dir) return undefined;
  const path = join(dir, name);
  return existsSync(path) ? path : undefined;
}

export async function resolveBinary(group: BuildGroup, name: string, log: (line: string) => void): Promise<string> {
  return fromAssets(name) ?? resolveCached(group, name, log);
}

/** From the per-user cache only, built when missing (envtest's KUBEBUILDER_ASSETS never holds these). */
export async function resolveCached(group: BuildGroup, name: string, log: (line: string) => void): Promise<string> {
  const cached = cachedBinary(group, name);
  if (!existsSync(cached)) {
    if (probing.getStore()) throw new NotCached();
    await buildGroup(group, log);
  }
  return cached;
}

/** Set while isCached runs an ensure function: a missing binary ends it instead of being built. */
const probing = new AsyncLocalStorage<true>();
class NotCached extends Error {}

/** Whether `ensure` (one of the ensure* functions here) finds everything in the cache: it builds nothing. */
export async function isCached(ensure: () => Promise<unknown>): Promise<boolean> {
  try {
    await probing.run(true, ensure);
    return true;
  } catch (err) {
    if (err instanceof NotCached) return false;
    throw err;
  }
}

/** Each wanted binary's path by resolveBinary, one after the other: the first of a group builds it, the rest find it cached. */
export async function resolveBinaries<K extends string>(
  wanted: Record<K, [group: BuildGroup, name: string]>,
  log: (line: string) => void,
): Promise<Record<K, string>> {
  const paths = {} as Record<K, string>;
  for (const key of Object.keys(wanted) as K[]) {
    const [group, name] = wanted[key];
    paths[key] = await resolveBinary(group, name, log);
  }
  return paths;
}

function goBinary(): string {
  const fromRoot = process.env.GOROOT ? join(process.env.GOROOT, 'bin', 'go') : undefined;
  if (fromRoot && existsSync(fromRoot)) return fromRoot;
  const probe = spawnSync('go', ['version'], { encoding: 'utf8' });
  if (!probe.error) return 'go';
  if (existsSync('/usr/local/go/bin/go')) return '/usr/local/go/bin/go';
  throw new ControlPlaneError(
    'Go is not installed (no `go` on PATH, nor /usr/local/go/bin/go).',
    'The local control plane is built from source with Go >= 1.24. Install Go, or point ' +
      'KUBEBUILDER_ASSETS at a folder holding kube-apiserver, kube-controller-manager and etcd, ' +
      'or set USE_EXISTING_CLUSTER=true to use the cluster in KUBECONFIG.',
  );
}

function checkGoVersion(go: string, env: NodeJS.ProcessEnv): string {
  const out = spawnSync(go, ['env', 'GOVERSION'], { encoding: 'utf8', env }).stdout.trim();
  const m = /^go(\d+)\.(\d+)/.exec(out);
  if (!m) throw new ControlPlaneError(`Could not read the Go version from \`${go} env GOVERSION\` (got "${out}").`);
  const [major, minor] = [Number(m[1]), Number(m[2])];
  if (major < MIN_GO[0] || (major === MIN_GO[0] && minor < MIN_GO[1])) {
    throw new ControlPlaneError(`Go ${out} is too old: building the control plane needs Go >= ${MIN_GO.join('.')}.`);
  }
  return out;
}

/**
 * One build at a time per cache entry, across processes. A process that finds the entry being
 * built waits for that build (`npm test` builds the add-ons in the background while the tests that
 * need none run, and a test that needs one waits here); a lock whose holder died is taken over.
 */
export async function acquireBuildLock(lockPath: string, describe: string, log: (line: string) => void): Promise<() => void> {
  mkdirSync(dirname(lockPath), { recursive: true });
  // Made whole, then linked into place (link fails if the lock exists): a lock is never seen empty.
  const mine = `${lockPath}.${process.pid}`;
  writeFileSync(mine, String(process.pid));
  let announced = 0;
  try {
    for (;;) {
      try {
        linkSync(mine, lockPath);
        return () => rmSync(lockPath, { force: true });
      } catch {
        const holder = lockHolder(lockPath);
        if (holder === undefined) continue; // released meanwhile
        if (!holder || !isAlive(holder)) {
          rmSync(lockPath, { force: true });
          continue;
        }
        if (announced !== holder) log(`control plane: waiting for pid ${holder}, which is building ${describe}`);
        announced = holder;
        await new Promise((resolve) => setTimeout(resolve, 2_000));
      }
    }
  } finally {
    rmSync(mine, { force: true });
  }
}

/** The pid in a build lock; undefined once it is gone. */
function lockHolder(lockPath: string): number | undefined {
  try {
    return Number(readFileSync(lockPath, 'utf8'));
  } catch {
    return undefined;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

async function buildGroup(group: BuildGroup, log: (line: string) => void): Promise<void> {
  const go = goBinary();
  const env = { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: group.toolchain ?? 'local', GOFLAGS: '-mod=readonly -buildvcs=false' };
  const goVersion = checkGoVersion(go, env);
  const entry = join(cacheRoot(), 'controlplane', group.key);
  const release = await acquireBuildLock(join(entry, '.build.lock'), group.describe, log);
  if (group.binaries.every((name) => existsSync(join(entry, 'bin', name)))) {
    release(); // built by the process this one waited for
    return;
  }
  const staging = join(entry, `bin.partial-${process.pid}`);
  const started = Date.now();
  try {
    log(`control plane: building ${group.describe} with ${goVersion} into ${entry}`);
    log('control plane: this happens once per version (15-30 min on 2 cores for Kubernetes); later runs reuse the cache');
    await runGo(go, ['mod', 'download'], group.module, env, started, log, 'downloading modules');
    rmSync(staging, { recursive: true, force: true });
    mkdirSync(staging, { recursive: true });
    await runGo(
      go,
      ['build', '-v', '-trimpath', '-ldflags', group.ldflags, '-o', staging + '/', ...group.packages],
      group.module,
      env,
      started,
      log,
      'compiling',
    );
    for (const [built, name] of Object.entries(group.renames ?? {})) {
      if (existsSync(join(staging, built))) renameSync(join(staging, built), join(staging, name));
    }
    for (const copy of group.copies ?? []) {
      const list = spawnSync(go, ['list', '-m', '-f', '{{.Dir}}', copy.module], { cwd: group.module, env, encoding: 'utf8' });
      const moduleDir = list.stdout.trim();
      if (list.status !== 0 || !moduleDir) throw new ControlPlaneError(`\`go list -m ${copy.module}\` failed: ${list.stderr.trim()}`);
      // The module cache is read-only; the copies must not be, or removing the entry would fail.
      const cp = spawnSync('cp', ['-R', '--no-preserve=mode', join(moduleDir, copy.from), join(staging, copy.to)], { encoding: 'utf8' });
      if (cp.status !== 0) throw new ControlPlaneError(`Could not copy ${copy.from} of ${copy.module}: ${cp.stderr.trim()}`);
    }
    for (const name of group.binaries) {
      if (!existsSync(join(staging, name))) throw new ControlPlaneError(`go build finished but ${name} is missing in ${staging}`);
    }
    rmSync(join(entry, 'bin'), { recursive: true, force: true });
    renameSync(staging, join(entry, 'bin'));
    log(`control plane: built ${group.describe} in ${formatDuration(Date.now() - started)}`);
  } finally {
    rmSync(staging, { recursive: true, force: true });
    release();
  }
}

/** Runs go, printing a heartbeat with the elapsed time and how many packages it compiled. */
function runGo(
  go: string,
  args: string[],
  cwd: string,
  env: NodeJS.ProcessEnv,
  started: number,
  log: (line: string) => void,
  phase: string,
): Promise<void> {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(go, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
    let packages = 0;
    const tail: string[] = [];
    const onLine = (chunk: Buffer): void => {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (!line) continue;
        if (/^[\w.-]+(\/[\w.~-]+)+$/.test(line)) packages++;
        tail.push(line);
        if (tail.length > 40) tail.shift();
      }
    };
    child.stdout.on('data', onLine);
    child.stderr.on('data', onLine);
    const heartbeat = setInterval(() => {
      const detail = phase === 'compiling' ? `, ${packages} packages compiled` : '';
      log(`control plane: ${phase}... ${formatDuration(Date.now() - started)} elapsed${detail}`);
    }, 15_000);
    child.on('error', (err) => {
      clearInterval(heartbeat);
      reject(new ControlPlaneError(`Could not run ${go}: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearInterval(heartbeat);
      if (code === 0) return resolvePromise();
      const why = signal ? `was killed by ${signal}` : `exited with code ${code}`;
      const errors = tail.filter((l) => !/^[\w.-]+(\/[\w.~-]+)+$/.test(l)).slice(-20);
      reject(
        new ControlPlaneError(
          `\`go ${args[0]}\` in ${cwd} ${why} after ${formatDuration(Date.now() - started)}.`,
          errors.length ? `Last output:\n  ${errors.join('\n  ')}` : undefined,
        ),
      );
    });
  });
}
