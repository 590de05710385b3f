import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { inTurn } from '../../scripts/lab/bench/contestants.js';

describe('inTurn (the order programs run in, round by round)', () => {
  it('puts each program once in each position over as many rounds as there are programs', () => {
    const programs = ['fair', 'fifo', 'peer'];
    const rounds = [0, 1, 2].map((r) => inTurn(programs, r));
    for (const order of rounds) assert.deepEqual([...order].sort(), [...programs].sort());
    for (let position = 0; position < programs.length; position++) {
      assert.deepEqual(rounds.map((order) => order[position]).sort(), [...programs].sort(), `position ${position}`);
    }
    assert.deepEqual(inTurn(programs, 3), programs);
  });

  it('alternates two programs, first as given', () => {
    assert.deepEqual(inTurn(['ours', 'peer'], 0), ['ours', 'peer']);
    assert.deepEqual(inTurn(['ours', 'peer'], 1), ['peer', 'ours']);
    assert.deepEqual(inTurn(['ours', 'peer'], 2), ['ours', 'peer']);
  });

  it('leaves the list it was given alone', () => {
    const programs = ['a', 'b', 'c'];
    inTurn(programs, 1);
    assert.deepEqual(programs, ['a', 'b', 'c']);
    assert.deepEqual(inTurn([], 5), []);
  });
});
