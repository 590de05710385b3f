/**
 * A cluster stops its add-ons from their records alone (scripts/testbed/controlplane/addons.ts): the
 * processes an add-on recorded in the cluster folder are stopped, the record is dropped, and a
 * folder with no add-on is no error.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { recordAddon, stopAddons } from '../../scripts/testbed/controlplane/addons.js';
import { isAlive } from '../../scripts/ship/gobuild.js';
import { isZombie } from '../../scripts/testbed/controlplane/process.js';

/** A process whose command line names `dir`, as the cluster's processes do. */
function processIn(dir: string): { pid: number; exited: Promise<unknown> } {
  // One process (no shell with a child that would outlive it), with the folder as an argument.
  const child = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)', dir], { stdio: 'ignore' });
  return { pid: child.pid!, exited: new Promise((resolve) => child.once('exit', resolve)) };
}

test('stopAddons stops every process an add-on recorded and forgets the record', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'addons-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const [a, b] = [processIn(dir), processIn(dir)];
  t.after(() => [a, b].forEach((p) => isAlive(p.pid) && process.kill(p.pid, 'SIGKILL')));
  recordAddon(dir, 'example', [a.pid, 0, b.pid]); // 0: a process not started yet
  await stopAddons(dir);
  for (const p of [a, b]) assert.ok(!isAlive(p.pid) || isZombie(p.pid), `pid ${p.pid} still runs`);
  await Promise.all([a.exited, b.exited]);
  assert.ok(!existsSync(join(dir, 'addons', 'example.json')));
});

test('a cluster folder without add-ons stops without error', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'addons-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  await stopAddons(dir);
  assert.deepEqual(existsSync(join(dir, 'addons')), false);
});
