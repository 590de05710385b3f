/**
 * The pipelining bench's measure (scripts/lab/bench/pipelining.ts): the flood's RSS growth is
 * counted from the warm idle RSS, and the young generation's regrowth counts whether or not V8
 * shrank it after the warm-up.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { floodGrowth, youngExcess, type FloodMemory } from '../../scripts/lab/bench/pipelining.js';

const MiB = 1_048_576;

describe('floodGrowth (what the pipelining bench counts as the flood cost)', () => {
  it('counts the young generation from its cold size when V8 had not shrunk it after the warm-up', () => {
    const memory: FloodMemory = { idleRss: 88 * MiB, peakRss: 90 * MiB, coldYoung: 1 * MiB, warmYoung: 8 * MiB };
    assert.equal(youngExcess(memory), 7 * MiB);
    assert.equal(floodGrowth(memory), 9 * MiB, 'the 7 MiB the young generation still held at the warm idle count as growth');
  });

  it('counts from the warm idle RSS as it is when the young generation was back to its cold size', () => {
    const memory: FloodMemory = { idleRss: 80 * MiB, peakRss: 89 * MiB, coldYoung: 1 * MiB, warmYoung: 1 * MiB };
    assert.equal(youngExcess(memory), 0);
    assert.equal(floodGrowth(memory), 9 * MiB);
  });

  it('never counts a young generation smaller than cold as growth', () => {
    const memory: FloodMemory = { idleRss: 80 * MiB, peakRss: 89 * MiB, coldYoung: 4 * MiB, warmYoung: 1 * MiB };
    assert.equal(youngExcess(memory), 0);
    assert.equal(floodGrowth(memory), 9 * MiB);
  });

  it('counts from the warm idle RSS alone when the operator did not report its young generation', () => {
    const memory: FloodMemory = { idleRss: 88 * MiB, peakRss: 90 * MiB, coldYoung: undefined, warmYoung: 8 * MiB };
    assert.equal(youngExcess(memory), undefined);
    assert.equal(floodGrowth(memory), 2 * MiB);
  });
});
