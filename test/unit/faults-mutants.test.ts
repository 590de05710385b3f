/**
 * The fault campaign's mutants (scripts/lab/faults/mutants/): each still applies to HEAD, so a
 * change to src/ that moves the code a mutant re-breaks fails here, not in the middle of a
 * campaign; and MUTANTS, the list the campaign runs, names exactly the patch files.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { applyMutant, headTree, MUTANT_CLASSES, MUTANTS, MUTANTS_DIR, mutantPatch } from '../../scripts/lab/faults/mutants/mutants.js';

describe('fault campaign mutants', () => {
  it('MUTANTS names exactly the patch files', () => {
    const files = readdirSync(MUTANTS_DIR);
    assert.deepEqual(
      files.filter((f) => !f.endsWith('.patch')),
      [],
      'only patches in the folder',
    );
    assert.deepEqual(files.map((f) => f.slice(0, -'.patch'.length)).sort(), [...MUTANTS].sort());
  });

  it('has at least 8 mutants, each aimed at a fault class', () => {
    assert.ok(MUTANTS.length >= 8);
    for (const name of MUTANTS) assert.ok(MUTANT_CLASSES[name].length > 0, name);
  });

  it('each patch changes src/ only, in one hunk, and marks it with its name', () => {
    for (const name of MUTANTS) {
      const patch = readFileSync(mutantPatch(name), 'utf8');
      const files = [...patch.matchAll(/^\+\+\+ b\/(\S+)/gm)].map((m) => m[1]!);
      assert.ok(files.length > 0, `${name}: a patch of at least one file`);
      for (const f of files) assert.match(f, /^src\//, `${name} touches ${f}`);
      const hunks = patch.split(/^@@/m).slice(1);
      for (const hunk of hunks) assert.match(hunk, new RegExp(`^\\+.*MUTANT ${name}:`, 'm'), `${name}: a hunk without its marker`);
      assert.equal(hunks.length, 1, `${name}: one change, one bug alone`);
    }
  });

  describe('against a scratch copy of HEAD', () => {
    let tree = '';
    before(() => {
      tree = headTree();
    });
    after(() => rmSync(tree, { recursive: true, force: true }));

    for (const name of MUTANTS) {
      it(`${name}.patch applies (git apply --check)`, () => {
        applyMutant(name, tree, { check: true });
      });
    }
  });
});
