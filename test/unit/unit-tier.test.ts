/**
 * The unit tier needs no outside binary: no network, no Go, no apt. No file under test/unit, nor a
 * test/support module one imports, names what installs or builds one (apt-get through the test
 * bed's host packages, a Go build through scripts/ship/gobuild.ts, a Node line, the control
 * plane), nor runs go, apt-get, apt, dpkg or promtool by name: a test that needs one belongs to
 * test/e2e, where the test bed installs the binary once, into its cache.
 *
 * The check is by name, in the text: what proves the tier hermetic is running it with go and
 * apt-get off PATH and no network (docs/development.md says how); this keeps the obvious ways in out.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';

/** Functions that install or build an outside binary, or start what runs one. */
const INSTALLERS = [
  'ensureDebianPackages',
  'ensureForeignArchitecture',
  'ensureHostReady',
  'ensureOwnGoBinaries',
  'resolveBinary',
  'resolveBinaries',
  'resolveCached',
  'nodeBinary',
  'ensureSea',
  'acquireControlPlane',
];
const COMMANDS = ['go', 'apt-get', 'apt', 'dpkg', 'dpkg-query', 'promtool'];

const named = new RegExp(`\\b(${INSTALLERS.join('|')})\\b`, 'g');
const runs = new RegExp(`\\b(?:spawn|spawnSync|execFile|execFileSync|execSync|exec)\\(\\s*['"\`](${COMMANDS.join('|')})\\b`, 'g');

/** What in `source` reaches for an outside binary: the installer's or the command's name. */
function outsideBinaryUses(source: string): string[] {
  return [...source.matchAll(named), ...source.matchAll(runs)].map((m) => m[1]!);
}

const UNIT = 'test/unit';
const SELF = join(UNIT, 'unit-tier.test.ts');

/** The unit test files, and each test/support module one of them imports. */
function unitTierFiles(): string[] {
  const tests = readdirSync(UNIT)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => join(UNIT, f))
    .filter((f) => f !== SELF);
  const support = tests.flatMap((f) =>
    [...readFileSync(f, 'utf8').matchAll(/from '\.\.\/support\/([\w-]+)\.js'/g)].map((m) => join('test/support', `${m[1]}.ts`)),
  );
  return [...new Set([...tests, ...support])].filter((f) => existsSync(f)).sort();
}

test('no unit test, nor the support it imports, installs, builds or runs an outside binary', () => {
  const files = unitTierFiles();
  assert.ok(files.length > 50, `only ${files.length} files found under ${UNIT}`);
  const found = files.flatMap((f) => outsideBinaryUses(readFileSync(f, 'utf8')).map((use) => `${f}: ${use}`));
  assert.deepEqual(found, [], 'these belong in test/e2e');
});

test('the check finds a planted installer call and a planted command', () => {
  assert.deepEqual(outsideBinaryUses("ensureDebianPackages({ prometheus: 'promtool' }, log);"), ['ensureDebianPackages']);
  assert.deepEqual(outsideBinaryUses('const [b] = await ensureOwnGoBinaries(MODULE, opts);'), ['ensureOwnGoBinaries']);
  assert.deepEqual(outsideBinaryUses("spawnSync('promtool', ['check', 'rules', file]);"), ['promtool']);
  assert.deepEqual(outsideBinaryUses("execFileSync('go', ['build', '.'])"), ['go']);
  assert.deepEqual(outsideBinaryUses("spawnSync('sha256sum', ['--check']); spawn(process.execPath, ['-e', 'go'])"), []);
});
