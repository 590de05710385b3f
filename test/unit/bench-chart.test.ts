import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { scatterChart } from '../../scripts/lab/bench/chart.js';
import { updateDoc } from '../../scripts/lab/bench/report.js';

const texts = (svg: string): string[] => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);
/** The markers' centres: circles, and squares by their corner (7 x 7). */
const centres = (svg: string): [number, number][] => [
  ...[...svg.matchAll(/<circle cx="([\d.]+)" cy="([\d.]+)"/g)].map((m): [number, number] => [Number(m[1]), Number(m[2])]),
  ...[...svg.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="7"/g)].map((m): [number, number] => [Number(m[1]) + 3.5, Number(m[2]) + 3.5]),
];
/** The plot areas: [x, y, width, height] of each panel's frame. */
const frames = (svg: string): number[][] =>
  [...svg.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="none"/g)].map((m) => m.slice(1).map(Number));

describe('scatterChart (the fairness benchmark draws its SVG by hand)', () => {
  const svg = scatterChart({
    title: 'probes',
    xLabel: 'seconds',
    yLabel: 'latency',
    yTick: (y) => (y >= 1 ? `${y} s` : `${Math.round(y * 1000)} ms`),
    yFloor: 0.001,
    panels: [
      {
        title: 'restart',
        series: [
          {
            name: 'ours',
            points: [
              [1, 0.0002],
              [5.5, 0.05],
              [10.5, 0],
            ],
          },
          {
            name: 'peer',
            points: [
              [1, 2],
              [10.5, 19.6],
            ],
          },
        ],
      },
      { title: 'flood', series: [{ name: 'ours', points: [[3, 0.3]] }] },
    ],
  });

  it('draws every point inside its panel, the last x beyond the last round tick included', () => {
    const [restart, flood] = frames(svg);
    const points = centres(svg);
    assert.equal(points.length, 2 + 6, 'a legend entry per series, a marker per point');
    const inside = (f: number[], [x, y]: [number, number]): boolean => x >= f[0]! && x <= f[0]! + f[2]! && y >= f[1]! && y <= f[1]! + f[3]!;
    const plotted = points.filter(([, y]) => y > restart![1]!); // not the legend's
    assert.equal(plotted.length, 6);
    for (const p of plotted) assert.ok(inside(restart!, p) || inside(flood!, p), `point ${p.join(',')} outside the panels`);
  });

  it('puts values under the floor (0 included) on the bottom of the axis', () => {
    const [restart] = frames(svg);
    const bottom = restart![1]! + restart![3]!;
    const onBottom = centres(svg).filter(([, y]) => Math.abs(y - bottom) < 0.01);
    assert.equal(onBottom.length, 2);
  });

  it('labels the log axis with round powers of ten, once per series in the legend', () => {
    const labels = texts(svg);
    for (const t of ['1 ms', '10 ms', '100 ms', '1 s', '10 s', '100 s']) assert.ok(labels.includes(t), `no tick ${t}`);
    assert.ok(!labels.some((l) => /\d\.\d{4,}/.test(l)), `a tick with rounding noise: ${labels.join('|')}`);
    assert.equal(labels.filter((l) => l === 'ours').length, 1);
    assert.equal(labels.filter((l) => l === 'peer').length, 1);
  });
});

describe('updateDoc assets', () => {
  it("writes a section's files beside the document", (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-doc-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const doc = join(dir, 'benchmarks.md');
    updateDoc(doc, [{ id: 'fairness', markdown: '## Fairness\n\n![chart](fairness.svg)', assets: { 'fairness.svg': '<svg/>\n' } }]);
    assert.equal(readFileSync(join(dir, 'fairness.svg'), 'utf8'), '<svg/>\n');
    assert.match(readFileSync(doc, 'utf8'), /<!-- bench:fairness begin -->\n## Fairness/);
    assert.ok(!existsSync(join(dir, `fairness.svg.tmp-${process.pid}`)));
  });
});
