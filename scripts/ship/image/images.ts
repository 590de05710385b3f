/**
 * The images: the node's pod sandbox (pause) and the Job image the operator uses by default
 * (busybox:1.37, from Debian's busybox-static), made here and imported into the node's containerd
 * because no public registry is reachable; and the operator's own image, laid out as the
 * Dockerfile's final stage lays it out on a base built from Debian packages (base.ts). Each is
 * described by a spec (files, config, platform), written by mkimage (go-containerregistry): to a
 * docker-archive tar in the cache, keyed by the spec's content, or as the release's OCI archive.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { dirname, join, posix } from 'node:path';
import { cacheRoot } from '../gobuild.js';
import { ControlPlaneError } from '../errors.js';
import { COMPILE_CACHE_DIR } from './compile-cache.js';
import { parseFinalStage } from './dockerfile.js';

export interface ImageEntry {
  path: string;
  type: 'dir' | 'file' | 'symlink';
  source?: string;
  content?: string;
  target?: string;
  mode: number;
  uid: number;
  gid: number;
}

export interface ImageConfig {
  Entrypoint?: string[];
  Cmd?: string[];
  Env?: string[];
  User?: string;
  WorkingDir?: string;
  ExposedPorts?: Record<string, object>;
}

export interface ImageSpec {
  tag: string;
  entries: ImageEntry[];
  config: ImageConfig;
  /** GOARCH name; mkimage's own when absent. */
  architecture?: string;
}

/** The user the restricted pods run as (distroless' "nonroot"). */
const NONROOT = 65532;
const PASSWD = `root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:${NONROOT}:${NONROOT}:nonroot:/home/nonroot:/sbin/nologin\n`;
const GROUP = `root:x:0:\nnobody:x:65534:\nnonroot:x:${NONROOT}:\n`;

/** The pod sandbox image: a local name, so nobody mistakes it for registry.k8s.io's. */
export const PAUSE_IMAGE = 'localhost/echoperator/pause:local';
/** The operator's default JOB_IMAGE, as the container runtime normalizes it. */
export const JOB_IMAGE = 'docker.io/library/busybox:1.37';
const BUSYBOX = '/bin/busybox';

const file = (path: string, source: string, mode = 0o755): ImageEntry => ({ path, type: 'file', source, mode, uid: 0, gid: 0 });
const text = (path: string, content: string): ImageEntry => ({ path, type: 'file', content, mode: 0o644, uid: 0, gid: 0 });
const dir = (path: string, mode = 0o755, owner = 0): ImageEntry => ({ path, type: 'dir', mode, uid: owner, gid: owner });

/** The users, groups and folders every image here has, as distroless has them. */
export function baseEntries(): ImageEntry[] {
  return [text('etc/passwd', PASSWD), text('etc/group', GROUP), dir('tmp', 0o1777), dir(`home/nonroot`, 0o700, NONROOT)];
}

/** Adds the missing parent folders and sorts parents before children (tar order). */
export function withParents(entries: ImageEntry[]): ImageEntry[] {
  const byPath = new Map(entries.map((e) => [e.path, e]));
  for (const e of entries) {
    for (let p = posix.dirname(e.path); p !== '.' && p !== '/'; p = posix.dirname(p)) {
      if (!byPath.has(p)) byPath.set(p, dir(p));
    }
  }
  return [...byPath.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

export function pauseImageSpec(pauseBinary: string): ImageSpec {
  return {
    tag: PAUSE_IMAGE,
    entries: withParents([file('pause', pauseBinary)]),
    config: { Entrypoint: ['/pause'], User: '65535:65535' },
  };
}

/**
 * Debian's static busybox with a link per applet, so `printf` (the Echo Job's command) runs as is.
 * `busybox` is the binary to put in the image (any executable that answers `--list` with its
 * applets, one a line): unit tests pass a stand-in, so they need no busybox-static installed.
 */
export function busyboxImageSpec(busybox = BUSYBOX): ImageSpec {
  const applets = (spawnSync(busybox, ['--list'], { encoding: 'utf8' }).stdout ?? '').split('\n').filter(Boolean);
  if (!applets.includes('printf')) throw new ControlPlaneError(`${busybox} has no printf applet (is busybox-static installed?).`);
  const links = applets
    .filter((a) => a !== 'busybox')
    .map((a): ImageEntry => ({ path: `bin/${a}`, type: 'symlink', target: 'busybox', mode: 0o777, uid: 0, gid: 0 }));
  return {
    tag: JOB_IMAGE,
    entries: withParents([...baseEntries(), file('bin/busybox', busybox), ...links]),
    config: { Cmd: ['sh'], Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'] },
  };
}

/**
 * busybox whose printf fails (exit 3): a Job image for tests of a run that fails for real, since
 * printf itself cannot be made to fail by any message.
 */
export const FAILING_JOB_IMAGE = 'localhost/echoperator/busybox-failing:local';
export function failingImageSpec(busyboxBinary = BUSYBOX): ImageSpec {
  const busybox = busyboxImageSpec(busyboxBinary);
  const script: ImageEntry = {
    path: 'bin/printf',
    type: 'file',
    content: '#!/bin/sh\necho "printf: failing on purpose" >&2\nexit 3\n',
    mode: 0o755,
    uid: 0,
    gid: 0,
  };
  return { ...busybox, tag: FAILING_JOB_IMAGE, entries: busybox.entries.map((e) => (e.path === script.path ? script : e)) };
}

/**
 * The operator's image: the Dockerfile's final stage applied to its base (base.ts: Debian's
 * packages and Node's official binary, as distroless' nodejs image holds them), for the base's
 * platform. The Dockerfile copies the build's files (`files`: the bundle and the entrypoint that
 * runs it, dist/bundle/) and the code cache.
 */
export function operatorImageSpec(opts: {
  dockerfile: string;
  repoRoot: string;
  /** The build's files the final stage may copy (local paths under repoRoot). */
  files: string[];
  tag: string;
  /** base.ts's BaseLayer: its platform and entries. */
  base: { platform: string; entries: ImageEntry[] };
  /**
   * The bundle's compile cache (compile-cache.ts), for the final stage's copy of
   * /COMPILE_CACHE_DIR; none: that copy adds nothing (a platform the cache is not made for).
   */
  compileCache?: Array<{ path: string; source: string }>;
}): ImageSpec {
  const stage = parseFinalStage(readFileSync(opts.dockerfile, 'utf8'));
  const copies = stage.copies.flatMap((c): ImageEntry[] => {
    if (c.source === `/${COMPILE_CACHE_DIR}` && c.dest === c.source)
      return (opts.compileCache ?? []).map((f) => file(f.path, f.source, 0o644));
    const workdir = stage.stageWorkdirs[c.fromStage];
    if (!workdir || !c.source.startsWith(`${workdir}/`))
      throw new ControlPlaneError(`Dockerfile: cannot map ${c.source} of stage ${c.fromStage} to the source tree.`);
    const local = join(opts.repoRoot, c.source.slice(workdir.length + 1));
    if (!opts.files.includes(local))
      throw new ControlPlaneError(`Dockerfile: the final stage copies ${c.source}; the local image knows only ${opts.files.join(', ')}.`);
    return [file(c.dest.replace(/^\//, ''), local, 0o644)];
  });
  return {
    tag: opts.tag,
    architecture: opts.base.platform,
    entries: withParents([...opts.base.entries, ...copies]),
    config: {
      Entrypoint: stage.entrypoint,
      Env: Object.entries(stage.env).map(([k, v]) => `${k}=${v}`),
      User: stage.user,
      ExposedPorts: Object.fromEntries(stage.exposedPorts.map((p) => [p, {}])),
    },
  };
}

/** A digest of everything the image is made of: the spec and the content of every file it copies. */
function specDigest(spec: ImageSpec): string {
  const hash = createHash('sha256').update(JSON.stringify(spec));
  for (const e of spec.entries) if (e.source) hash.update(readFileSync(e.source));
  return hash.digest('hex').slice(0, 16);
}

export interface BuiltImage {
  tag: string;
  tar: string;
}

/** Writes the image tar into the cache unless the same spec was written before. */
export function buildImage(mkimage: string, spec: ImageSpec): BuiltImage {
  const slug = spec.tag.replace(/[^a-zA-Z0-9.-]+/g, '_');
  const tar = join(cacheRoot(), 'images', `${slug}-${specDigest(spec)}.tar`);
  if (existsSync(tar)) return { tag: spec.tag, tar };
  mkdirSync(dirname(tar), { recursive: true });
  const partial = `${tar}.partial-${process.pid}`;
  const run = spawnSync(mkimage, [], { input: JSON.stringify({ ...spec, output: partial }), encoding: 'utf8' });
  if (run.status !== 0) {
    rmSync(partial, { force: true });
    throw new ControlPlaneError(`Could not build the image ${spec.tag}: ${run.stderr.trim() || run.error?.message}`);
  }
  renameSync(partial, tar);
  return { tag: spec.tag, tar };
}

/** Imports image tars into the node's containerd (the kubelet's CRI namespace). */
export function importImages(containerdSocket: string, images: BuiltImage[]): void {
  for (const image of images) {
    const run = spawnSync('ctr', ['--address', containerdSocket, '--namespace', 'k8s.io', 'images', 'import', image.tar], {
      encoding: 'utf8',
    });
    if (run.status !== 0)
      throw new ControlPlaneError(`Could not import ${image.tag} into the node: ${(run.stderr || run.error?.message || '').trim()}`);
  }
}
