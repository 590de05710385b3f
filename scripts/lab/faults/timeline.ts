/**
 * One schedule's timeline, as events the runner records, and its chart: a hand-written SVG (no
 * dependency) with one lane per replica: the process's life as a thin bar ending in how it ended,
 * its lease terms as bars, its counted writes as ticks, and the faults as shaded spans (a fault of
 * the whole control plane, such as a kube-apiserver restart, spans every lane).
 *
 * Guarantees: timelineSvg() is a pure function of its arguments (same events, same bytes), and
 * every label is XML-escaped.
 */

export type TimelineEvent =
  /** A counted write the replica's proxy saw answered. */
  | { kind: 'write'; replica: string; at: number; label: string }
  /** A lease term, as the audit log shows it. */
  | { kind: 'term'; replica: string; from: number; to: number }
  /** A fault in force; without replica, one of the control plane. */
  | { kind: 'fault'; replica?: string; from: number; to: number; label: string }
  /** A replica's process from its start to its exit (or the schedule's end). */
  | { kind: 'life'; replica: string; from: number; to: number; end: string };

const WIDTH = 960;
const LEFT = 80;
const RIGHT = 70;
const TOP = 48;
const LANE = 54;
const COLORS = { write: '#1f5fbf', term: '#2e9d4f', fault: '#e07b00', life: '#9a9a9a', text: '#222' };

const esc = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
const fmt = (n: number): string => (Math.round(n * 10) / 10).toString();

export function timelineSvg(title: string, events: readonly TimelineEvent[]): string {
  const lanes = [...new Set(events.flatMap((e) => ('replica' in e && e.replica ? [e.replica] : [])))].sort(byReplica);
  const times = events.flatMap((e) => (e.kind === 'write' ? [e.at] : [e.from, e.to]));
  const t0 = times.length ? Math.min(...times) : 0;
  const t1 = Math.max(t0 + 1000, ...times);
  const plotW = WIDTH - LEFT - RIGHT;
  const x = (t: number): number => LEFT + ((t - t0) / (t1 - t0)) * plotW;
  const laneY = (r: string): number => TOP + lanes.indexOf(r) * LANE;
  const height = TOP + Math.max(1, lanes.length) * LANE + 56;
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}" font-family="sans-serif" font-size="12">`,
    `<rect width="${WIDTH}" height="${height}" fill="#fff"/>`,
    `<text x="${LEFT}" y="20" font-size="14" fill="${COLORS.text}">${esc(title)}</text>`,
  ];
  // Faults first, under everything else; labels of faults in one lane stacked, not overprinted.
  const labelsIn = new Map<string, number>();
  for (const e of events) {
    if (e.kind !== 'fault') continue;
    const stacked = labelsIn.get(e.replica ?? '') ?? 0;
    labelsIn.set(e.replica ?? '', stacked + 1);
    const y = e.replica ? laneY(e.replica) : TOP;
    const h = e.replica ? LANE - 6 : Math.max(1, lanes.length) * LANE - 6;
    const w = Math.max(2, x(e.to) - x(e.from));
    out.push(`<rect x="${fmt(x(e.from))}" y="${fmt(y)}" width="${fmt(w)}" height="${h}" fill="${COLORS.fault}" fill-opacity="0.22"/>`);
    out.push(`<text x="${fmt(x(e.from) + 2)}" y="${fmt(y + h - 4 - stacked * 13)}" fill="${COLORS.fault}">${esc(e.label)}</text>`);
  }
  for (const r of lanes) {
    const y = laneY(r);
    out.push(`<text x="8" y="${fmt(y + 24)}" fill="${COLORS.text}">${esc(r)}</text>`);
    out.push(`<line x1="${LEFT}" x2="${WIDTH - RIGHT}" y1="${fmt(y + LANE - 6)}" y2="${fmt(y + LANE - 6)}" stroke="#ddd"/>`);
  }
  for (const e of events) {
    if (e.kind === 'life') {
      const y = laneY(e.replica) + 30;
      out.push(
        `<rect x="${fmt(x(e.from))}" y="${fmt(y)}" width="${fmt(Math.max(1, x(e.to) - x(e.from)))}" height="3" fill="${COLORS.life}"/>`,
      );
      if (e.end) out.push(`<text x="${fmt(x(e.to) + 3)}" y="${fmt(y + 12)}" fill="${COLORS.text}" font-size="10">${esc(e.end)}</text>`);
    } else if (e.kind === 'term') {
      const y = laneY(e.replica) + 8;
      out.push(
        `<rect x="${fmt(x(e.from))}" y="${fmt(y)}" width="${fmt(Math.max(1, x(e.to) - x(e.from)))}" height="8" fill="${COLORS.term}" fill-opacity="0.8"/>`,
      );
    } else if (e.kind === 'write') {
      const y = laneY(e.replica) + 18;
      out.push(
        `<line x1="${fmt(x(e.at))}" x2="${fmt(x(e.at))}" y1="${fmt(y)}" y2="${fmt(y + 10)}" stroke="${COLORS.write}" stroke-width="1.5"><title>${esc(e.label)}</title></line>`,
      );
    }
  }
  const axisY = TOP + Math.max(1, lanes.length) * LANE;
  const step = niceStep((t1 - t0) / 1000);
  for (let s = 0; s <= (t1 - t0) / 1000 + 1e-9; s += step) {
    const px = x(t0 + s * 1000);
    out.push(`<line x1="${fmt(px)}" x2="${fmt(px)}" y1="${fmt(axisY - 4)}" y2="${fmt(axisY)}" stroke="#666"/>`);
    out.push(`<text x="${fmt(px)}" y="${fmt(axisY + 14)}" text-anchor="middle" fill="#666" font-size="10">${fmt(s)} s</text>`);
  }
  const legendY = axisY + 38;
  const legend: [string, string][] = [
    [COLORS.term, 'lease term (audit log)'],
    [COLORS.write, 'write (proxy)'],
    [COLORS.life, 'process'],
    [COLORS.fault, 'fault'],
  ];
  legend.forEach(([color, label], i) => {
    const lx = LEFT + i * 190;
    out.push(`<rect x="${lx}" y="${legendY - 9}" width="14" height="10" fill="${color}" fill-opacity="0.8"/>`);
    out.push(`<text x="${lx + 20}" y="${legendY}" fill="${COLORS.text}">${esc(label)}</text>`);
  });
  out.push('</svg>', '');
  return out.join('\n');
}

/** r0, r1, ..., r10 in numeric order. */
function byReplica(a: string, b: string): number {
  const n = (s: string): number => Number(/\d+$/.exec(s)?.[0] ?? 0);
  return n(a) - n(b) || a.localeCompare(b);
}

/** 1, 2 or 5 times a power of ten, for about 10 ticks. */
function niceStep(spanS: number): number {
  const raw = Math.max(spanS / 10, 0.1);
  const p = 10 ** Math.floor(Math.log10(raw));
  return [1, 2, 5, 10].map((m) => m * p).find((s) => s >= raw) ?? 10 * p;
}
