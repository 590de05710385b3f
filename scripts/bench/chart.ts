/**
 * A scatter chart as a standalone SVG document, from the bench's own numbers: panels side by
 * side sharing one legend, a linear x axis per panel and a logarithmic y axis (latencies span
 * milliseconds to minutes). Written by hand: a charting library would be a heavy dependency
 * (a DOM or a canvas) for a few dozen points, axes and labels; the output is plain SVG 1.1 that
 * GitHub and browsers render as an image.
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
