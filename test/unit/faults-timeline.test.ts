import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { timelineSvg, type TimelineEvent } from '../../scripts/lab/faults/timeline.js';

const T = 1_800_000_000_000;
const events: TimelineEvent[] = [
  { kind: 'life', replica: 'r0', from: T, to: T + 3000, end: 'exit 1' },
  { kind: 'life', replica: 'r10', from: T, to: T + 9000, end: 'exit 0' },
  { kind: 'life', replica: 'r2', from: T + 100, to: T + 9000, end: 'exit 0' },
  { kind: 'term', replica: 'r0', from: T + 500, to: T + 2500 },
  { kind: 'write', replica: 'r0', at: T + 1000, label: 'POST /jobs <201>' },
  { kind: 'fault', replica: 'r0', from: T + 1500, to: T + 6000, label: 'silent & "cut"' },
  { kind: 'fault', from: T + 1600, to: T + 6000, label: 'kube-apiserver restart' },
];

describe('timelineSvg', () => {
  it('is a pure function of its events', () => {
    assert.equal(timelineSvg('t', events), timelineSvg('t', [...events]));
  });

  it('draws a lane per replica in numeric order, and each kind of event', () => {
    const svg = timelineSvg('partition', events);
    const lanes = [...svg.matchAll(/<text x="8" y="[\d.]+" fill="#222">(r\d+)<\/text>/g)].map((m) => m[1]);
    assert.deepEqual(lanes, ['r0', 'r2', 'r10']);
    assert.match(svg, /fill="#2e9d4f"/, 'a lease term');
    assert.match(svg, /<line [^>]*stroke="#1f5fbf"/, 'a write tick');
    assert.match(svg, /kube-apiserver restart/);
  });

  it('escapes labels and the title as XML', () => {
    const svg = timelineSvg('a <b> & c', events);
    assert.match(svg, /a &lt;b&gt; &amp; c/);
    assert.match(svg, /POST \/jobs &lt;201&gt;/);
    assert.match(svg, /silent &amp; &quot;cut&quot;/);
    assert.doesNotMatch(svg, /<b>|<201>/);
  });
});
