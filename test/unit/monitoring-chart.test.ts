/**
 * lineChart (scripts/lab/bench/chart.ts), which draws docs/monitoring/*.svg from a real run: lines
 * inside their panels, a gap in the data left as a gap, the run's moments lettered on each panel.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { lineChart, siTick } from '../../scripts/lab/bench/chart.js';

const texts = (svg: string): string[] => [...svg.matchAll(/<text[^>]*>([^<]*)<\/text>/g)].map((m) => m[1]!);
const polylines = (svg: string): [number, number][][] =>
  [...svg.matchAll(/<polyline points="([^"]+)"/g)].map((m) => m[1]!.split(' ').map((p) => p.split(',').map(Number) as [number, number]));
const frames = (svg: string): number[][] =>
  [...svg.matchAll(/<rect x="([\d.]+)" y="([\d.]+)" width="([\d.]+)" height="([\d.]+)" fill="none"/g)].map((m) => m.slice(1).map(Number));

describe('lineChart (the monitoring pictures)', () => {
  const steady: [number, number][] = Array.from({ length: 10 }, (_, i) => [i * 2, i]);
  // A scrape gap between 8 and 14 s (the pod gone), and a NaN (a quantile of nothing).
  const gappy: [number, number][] = [
    [0, 1e6],
    [2, 2e6],
    [4, 3e6],
    [14, 3e6],
    [16, Number.NaN],
    [18, 4e6],
    [20, 5e6],
  ];
  const svg = lineChart({
    title: 'Process',
    xLabel: 'seconds',
    marks: [
      { x: 6, label: 'restart' },
      { x: 12, label: 'failover' },
    ],
    panels: [
      { title: 'steady', series: [{ name: 'a', points: steady }] },
      { title: 'gappy', series: [{ name: 'b', points: gappy }], yTick: (y) => `${siTick(y)}B` },
    ],
  });

  it('draws every line inside its own panel', () => {
    const [left, right] = frames(svg);
    const inside = (f: number[], [x, y]: [number, number]): boolean => x >= f[0]! && x <= f[0]! + f[2]! && y >= f[1]! && y <= f[1]! + f[3]!;
    const lines = polylines(svg);
    assert.ok(lines[0]!.every((p) => inside(left!, p)));
    for (const line of lines.slice(1))
      assert.ok(
        line.every((p) => inside(right!, p)),
        `a line outside its panel: ${JSON.stringify(line)}`,
      );
  });

  it('breaks a line at a gap in the data and at NaN instead of bridging them', () => {
    // 0-4 s, then 14 s alone (a dot), then 18-20 s.
    assert.deepEqual(
      polylines(svg).map((l) => l.length),
      [10, 3, 2],
    );
    assert.equal([...svg.matchAll(/<circle [^>]*r="1.5"/g)].length, 1);
  });

  it("letters the run's moments on every panel and keys them under the title", () => {
    const labels = texts(svg);
    assert.ok(labels.includes('A: restart') && labels.includes('B: failover'));
    assert.equal(labels.filter((l) => l === 'A').length, 2);
    assert.ok(labels.includes('5MB') && labels.includes('b'), `ticks and legend: ${labels.join('|')}`);
  });

  it('formats ticks with SI prefixes and three significant digits', () => {
    assert.deepEqual([0, 0.0042, 0.25, 12, 1500, 53_100_000].map(siTick), ['0', '4.2m', '250m', '12', '1.5k', '53.1M']);
  });
});
