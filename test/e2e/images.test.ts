/**
 * The node's images are reproducible: the same spec gives the same image digest, whenever and
 * wherever it is written, and any change to a file gives another (mkimage, go-containerregistry).
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { ensureImageTools } from '../../scripts/ship/image/tools.js';
import { busyboxImageSpec, type ImageSpec } from '../../scripts/ship/image/images.js';

function write(mkimage: string, spec: ImageSpec, output: string): { id: string; digest: string } {
  const r = spawnSync(mkimage, [], { input: JSON.stringify({ ...spec, output }), encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return JSON.parse(r.stdout) as { id: string; digest: string };
}

test('the same image spec gives the same digest; a changed file gives another', async (t) => {
  const { mkimage } = await ensureImageTools(() => undefined);
  const dir = mkdtempSync(join(tmpdir(), 'images-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const spec = busyboxImageSpec();
  const first = write(mkimage, spec, join(dir, 'a.tar'));
  const again = write(mkimage, spec, join(dir, 'b.tar'));
  assert.deepEqual(again, first);
  assert.match(first.digest, /^sha256:[0-9a-f]{64}$/);

  const file = join(dir, 'motd');
  writeFileSync(file, 'one');
  const withFile = (s: ImageSpec): ImageSpec => ({
    ...s,
    entries: [...s.entries, { path: 'etc/motd', type: 'file', source: file, mode: 0o644, uid: 0, gid: 0 }],
  });
  const one = write(mkimage, withFile(spec), join(dir, 'c.tar'));
  writeFileSync(file, 'two');
  const two = write(mkimage, withFile(spec), join(dir, 'd.tar'));
  assert.notEqual(one.digest, first.digest);
  assert.notEqual(two.digest, one.digest);
});
