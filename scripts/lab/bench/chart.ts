/**
 * Charts as standalone SVG documents, from measured numbers:
 * - scatterChart: the bench's panels side by side sharing one legend, a linear x axis per panel
 *   and a logarithmic y axis (latencies span milliseconds to minutes);
 * - lineChart: time series (docs/monitoring.md's dashboard panels, queried from a real
 *   Prometheus) in a grid of panels, each with its own legend and linear y axis, and lettered
 *   vertical lines at the moments the run did something (a restart, a failover).
 * Written by hand: a charting library would be a heavy dependency (a DOM or a canvas) for a few
 * hundred points, axes and labels; the output is plain SVG 1.1 that GitHub and browsers render as
 * an image.
 */

export interface Series {
  name: string;
  /** [x, y] in the axes' units; y below the axis (e.g. 0, on a log scale) is drawn on its bottom. */
  points: [number, number][];
}

export interface Panel {
  title: string;
  series: Series[];
}

export interface ChartOptions {
  title: string;
  xLabel: string;
  yLabel: string;
  panels: Panel[];
  /** Formats a y tick (a power of ten in the y unit). */
  yTick?: (y: number) => string;
  /** The bottom of the y axis at the least (a power of ten): smaller values are drawn on it. */
  yFloor?: number;
}

/** Distinguishable in colour and in shape (a reader may print it in grey). */
const STYLES = [
  { color: '#1f77b4', marker: 'circle' },
  { color: '#ff7f0e', marker: 'square' },
  { color: '#2ca02c', marker: 'triangle' },
  { color: '#d62728', marker: 'diamond' },
] as const;

const PANEL_W = 440;
const PANEL_H = 300;
const MARGIN = { left: 76, right: 16, top: 64, bottom: 52 };

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
const f = (x: number): string => (Math.round(x * 10) / 10).toString();

function marker(kind: (typeof STYLES)[number]['marker'], x: number, y: number, color: string): string {
  const r = 3.5;
  const attrs = `fill="${color}" fill-opacity="0.75" stroke="${color}"`;
  switch (kind) {
    case 'circle':
      return `<circle cx="${f(x)}" cy="${f(y)}" r="${r}" ${attrs}/>`;
    case 'square':
      return `<rect x="${f(x - r)}" y="${f(y - r)}" width="${2 * r}" height="${2 * r}" ${attrs}/>`;
    case 'triangle':
      return `<polygon points="${f(x)},${f(y - r - 1)} ${f(x - r - 1)},${f(y + r)} ${f(x + r + 1)},${f(y + r)}" ${attrs}/>`;
    case 'diamond':
      return `<polygon points="${f(x)},${f(y - r - 1)} ${f(x + r + 1)},${f(y)} ${f(x)},${f(y + r + 1)} ${f(x - r - 1)},${f(y)}" ${attrs}/>`;
  }
}

/** "Nice" linear ticks from 0 to at least max. */
function linearTicks(max: number): number[] {
  const span = max > 0 ? max : 1;
  const raw = span / 6;
  const pow = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * pow).find((s) => s >= raw)!;
  return Array.from({ length: Math.ceil(span / step - 1e-9) + 1 }, (_, i) => Number((i * step).toPrecision(6)));
}

export function scatterChart(o: ChartOptions): string {
  const all = o.panels.flatMap((p) => p.series.flatMap((s) => s.points)).filter(([, y]) => y > 0);
  const ys = all.map(([, y]) => y);
  const decade = (e: number): number => Number((10 ** e).toPrecision(1));
  const lo = Math.max(decade(Math.floor(Math.log10(ys.length ? Math.min(...ys) : 0.01))), o.yFloor ?? 0);
  const hi = decade(Math.ceil(Math.log10(ys.length ? Math.max(...ys) : 1)));
  const decades = Math.max(1, Math.round(Math.log10(hi / lo)));
  const yTick = o.yTick ?? ((y: number) => String(y));
  const width = o.panels.length * (PANEL_W + MARGIN.left + MARGIN.right);
  const height = PANEL_H + MARGIN.top + MARGIN.bottom;
  const names = [...new Set(o.panels.flatMap((p) => p.series.map((s) => s.name)))];
  const style = (name: string): (typeof STYLES)[number] => STYLES[names.indexOf(name) % STYLES.length]!;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="18" text-anchor="middle" font-size="14" font-weight="bold">${esc(o.title)}</text>`,
  ];
  // Legend, centred under the title.
  const legendW = names.reduce((w, n) => w + 28 + n.length * 7, 0);
  let lx = (width - legendW) / 2;
  for (const n of names) {
    const s = style(n);
    out.push(marker(s.marker, lx + 6, 38, s.color), `<text x="${f(lx + 14)}" y="42">${esc(n)}</text>`);
    lx += 28 + n.length * 7;
  }
  for (const [i, panel] of o.panels.entries()) {
    const x0 = i * (PANEL_W + MARGIN.left + MARGIN.right) + MARGIN.left;
    const y0 = MARGIN.top;
    const xs = panel.series.flatMap((s) => s.points.map(([x]) => x));
    const xt = linearTicks(xs.length ? Math.max(...xs) : 1);
    const xMax = xt[xt.length - 1]!;
    const px = (x: number): number => x0 + (x / xMax) * PANEL_W;
    const py = (y: number): number => y0 + PANEL_H - (Math.log10(Math.max(y, lo) / lo) / decades) * PANEL_H;
    out.push(`<g>`, `<text x="${x0 + PANEL_W / 2}" y="${y0 - 6}" text-anchor="middle" font-weight="bold">${esc(panel.title)}</text>`);
    for (const t of xt) {
      out.push(
        `<line x1="${f(px(t))}" y1="${y0}" x2="${f(px(t))}" y2="${y0 + PANEL_H}" stroke="#e5e5e5"/>`,
        `<text x="${f(px(t))}" y="${y0 + PANEL_H + 16}" text-anchor="middle">${t}</text>`,
      );
    }
    for (let d = 0; d <= decades; d++) {
      const y = Number((lo * 10 ** d).toPrecision(1));
      out.push(
        `<line x1="${x0}" y1="${f(py(y))}" x2="${x0 + PANEL_W}" y2="${f(py(y))}" stroke="#e5e5e5"/>`,
        `<text x="${x0 - 6}" y="${f(py(y) + 4)}" text-anchor="end">${esc(yTick(y))}</text>`,
      );
    }
    out.push(
      `<rect x="${x0}" y="${y0}" width="${PANEL_W}" height="${PANEL_H}" fill="none" stroke="#333"/>`,
      `<text x="${x0 + PANEL_W / 2}" y="${y0 + PANEL_H + 38}" text-anchor="middle">${esc(o.xLabel)}</text>`,
      `<text transform="translate(${x0 - 60} ${y0 + PANEL_H / 2}) rotate(-90)" text-anchor="middle">${esc(o.yLabel)}</text>`,
    );
    for (const s of panel.series) {
      const st = style(s.name);
      for (const [x, y] of s.points) out.push(marker(st.marker, px(x), py(y), st.color));
    }
    out.push(`</g>`);
  }
  out.push(`</svg>`);
  return `${out.join('\n')}\n`;
}

export interface LinePanel {
  title: string;
  series: Series[];
  /** Formats a y tick in the panel's unit (e.g. seconds, bytes); SI-prefixed numbers by default. */
  yTick?: (y: number) => string;
}

export interface LineChartOptions {
  title: string;
  xLabel: string;
  panels: LinePanel[];
  /** Moments of the run, drawn on every panel as a vertical line lettered A, B, ... (x in the axes' units). */
  marks?: { x: number; label: string }[];
  /** Panels per row. @default 2 */
  columns?: number;
}

/** Line colours: distinguishable, and each also dashed differently past the fourth. */
const LINE_DASHES = ['', '6 3', '2 2', '8 3 2 3'];
const LINE_H = 220;
const LEGEND_LINE = 15;

/** A number with an SI prefix and at most three significant digits (0.0042 -> 4.2m, 53100000 -> 53.1M). */
export function siTick(y: number): string {
  if (y === 0) return '0';
  const prefixes: [number, string][] = [
    [1e9, 'G'],
    [1e6, 'M'],
    [1e3, 'k'],
    [1, ''],
    [1e-3, 'm'],
    [1e-6, 'µ'],
  ];
  const [scale, prefix] = prefixes.find(([p]) => Math.abs(y) >= p) ?? prefixes[prefixes.length - 1]!;
  return `${Number((y / scale).toPrecision(3))}${prefix}`;
}

/** Drawn panel by panel in a grid; a panel's legend lists its series under the plot. */
export function lineChart(o: LineChartOptions): string {
  const columns = Math.min(o.columns ?? 2, Math.max(1, o.panels.length));
  const marks = (o.marks ?? []).map((m, i) => ({ ...m, letter: String.fromCharCode(65 + i) }));
  const legendRows = Math.max(1, ...o.panels.map((p) => p.series.length));
  const cellW = PANEL_W + MARGIN.left + MARGIN.right;
  const cellH = 28 + LINE_H + 40 + legendRows * LEGEND_LINE + 8;
  const keyLines = Math.ceil(marks.length / 3);
  const top = 30 + keyLines * LEGEND_LINE;
  const width = columns * cellW;
  const height = top + Math.ceil(o.panels.length / columns) * cellH;
  const xs = o.panels.flatMap((p) => p.series.flatMap((s) => s.points.map(([x]) => x))).concat(marks.map((m) => m.x));
  const xt = linearTicks(xs.length ? Math.max(...xs) : 1);
  const xMax = xt[xt.length - 1]!;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="100%" height="100%" fill="white"/>`,
    `<text x="${width / 2}" y="18" text-anchor="middle" font-size="14" font-weight="bold">${esc(o.title)}</text>`,
  ];
  for (const [i, m] of marks.entries()) {
    const x = 16 + (i % 3) * (width / 3);
    out.push(`<text x="${f(x)}" y="${36 + Math.floor(i / 3) * LEGEND_LINE}" fill="#555">${m.letter}: ${esc(m.label)}</text>`);
  }
  for (const [i, panel] of o.panels.entries()) {
    const x0 = (i % columns) * cellW + MARGIN.left;
    const y0 = top + Math.floor(i / columns) * cellH + 28;
    const ys = panel.series.flatMap((s) => s.points.map(([, y]) => y)).filter((y) => Number.isFinite(y));
    const yt = linearTicks(ys.length ? Math.max(...ys) : 1);
    const yMax = yt[yt.length - 1]!;
    const yTick = panel.yTick ?? siTick;
    const px = (x: number): number => x0 + (x / xMax) * PANEL_W;
    const py = (y: number): number => y0 + LINE_H - (Math.max(0, y) / yMax) * LINE_H;
    out.push(`<g>`, `<text x="${x0 + PANEL_W / 2}" y="${y0 - 8}" text-anchor="middle" font-weight="bold">${esc(panel.title)}</text>`);
    for (const t of xt) {
      out.push(
        `<line x1="${f(px(t))}" y1="${y0}" x2="${f(px(t))}" y2="${y0 + LINE_H}" stroke="#e5e5e5"/>`,
        `<text x="${f(px(t))}" y="${y0 + LINE_H + 16}" text-anchor="middle">${t}</text>`,
      );
    }
    for (const t of yt) {
      out.push(
        `<line x1="${x0}" y1="${f(py(t))}" x2="${x0 + PANEL_W}" y2="${f(py(t))}" stroke="#e5e5e5"/>`,
        `<text x="${x0 - 6}" y="${f(py(t) + 4)}" text-anchor="end">${esc(yTick(t))}</text>`,
      );
    }
    for (const m of marks) {
      out.push(
        `<line x1="${f(px(m.x))}" y1="${y0}" x2="${f(px(m.x))}" y2="${y0 + LINE_H}" stroke="#888" stroke-dasharray="3 3"/>`,
        `<text x="${f(px(m.x) + 2)}" y="${y0 + 11}" fill="#555" font-size="10">${m.letter}</text>`,
      );
    }
    out.push(
      `<rect x="${x0}" y="${y0}" width="${PANEL_W}" height="${LINE_H}" fill="none" stroke="#333"/>`,
      `<text x="${x0 + PANEL_W / 2}" y="${y0 + LINE_H + 32}" text-anchor="middle">${esc(o.xLabel)}</text>`,
    );
    for (const [j, s] of panel.series.entries()) {
      const color = STYLES[j % STYLES.length]!.color;
      const dash = LINE_DASHES[Math.floor(j / STYLES.length) % LINE_DASHES.length]!;
      const dashAttr = dash ? ` stroke-dasharray="${dash}"` : '';
      // A gap in the data (a missing scrape, a pod gone) breaks the line instead of bridging it.
      for (const run of contiguous(s.points)) {
        const d = run.map(([x, y]) => `${f(px(x))},${f(py(y))}`).join(' ');
        out.push(
          run.length === 1
            ? `<circle cx="${f(px(run[0]![0]))}" cy="${f(py(run[0]![1]))}" r="1.5" fill="${color}"/>`
            : `<polyline points="${d}" fill="none" stroke="${color}" stroke-width="1.5"${dashAttr}/>`,
        );
      }
      const ly = y0 + LINE_H + 50 + j * LEGEND_LINE;
      out.push(
        `<line x1="${x0}" y1="${ly - 4}" x2="${x0 + 20}" y2="${ly - 4}" stroke="${color}" stroke-width="2"${dashAttr}/>`,
        `<text x="${x0 + 26}" y="${ly}">${esc(s.name)}</text>`,
      );
    }
    out.push(`</g>`);
  }
  out.push(`</svg>`);
  return `${out.join('\n')}\n`;
}

/** The points split where x jumps by more than twice the usual step, or y is not a number. */
function contiguous(points: [number, number][]): [number, number][][] {
  const finite = points.map(([x, y]): [number, number] | undefined => (Number.isFinite(y) ? [x, y] : undefined));
  const steps = points
    .slice(1)
    .map(([x], i) => x - points[i]![0])
    .sort((a, b) => a - b);
  const step = steps[Math.floor(steps.length / 2)] ?? Infinity;
  const runs: [number, number][][] = [];
  let current: [number, number][] = [];
  for (const [i, p] of finite.entries()) {
    const gap = i > 0 && points[i]![0] - points[i - 1]![0] > 2 * step;
    if (!p || gap) {
      if (current.length) runs.push(current);
      current = [];
    }
    if (p) current.push(p);
  }
  if (current.length) runs.push(current);
  return runs;
}
