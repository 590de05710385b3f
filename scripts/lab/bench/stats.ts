/**
 * Statistics and formatting of the figures.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { type BenchEnv } from './env.js';

export function median(xs: number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m]! : (s[m - 1]! + s[m]!) / 2;
}

export function quantile(xs: number[], q: number): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))]!;
}

export const secs = (ms: number, digits = 2): string => `${(ms / 1000).toFixed(digits)} s`;
export const mib = (bytes: number | undefined): string => (bytes === undefined ? 'n/a' : `${(bytes / 1048576).toFixed(1)} MiB`);
/** Two decimals; two significant digits below 0.1 (e.g. 0.0071, a hundred times better, not 0.00). */
export const ratio = (x: number): string => (!Number.isFinite(x) ? 'n/a' : x !== 0 && Math.abs(x) < 0.1 ? x.toPrecision(2) : x.toFixed(2));

export function minMax(xs: number[], f: (x: number) => string): string {
  if (xs.length <= 1) return '';
  return `${f(Math.min(...xs))} .. ${f(Math.max(...xs))}`;
}

/** A ratio column's cell: the median of per-round ratios in bold, then their range. */
export function ratioCell(ratios: number[]): string {
  const spread = ratios.length > 1 ? ` (${minMax(ratios, ratio)})` : '';
  return `**${ratio(median(ratios))}**${spread}`;
}

export function table(header: string[], rows: string[][]): string {
  const line = (cells: string[]): string => `| ${cells.join(' | ')} |`;
  return [line(header), line(header.map(() => '---')), ...rows.map(line)].join('\n');
}

/**
 * The audit log of a control plane started by scripts/testbed/controlplane/cluster.ts with its audit
 * policy (older ones have none); the file itself appears with the first logged write.
 */
export function auditLogPath(env: BenchEnv): string | undefined {
  if (!env.clusterDir || !existsSync(join(env.clusterDir, 'audit-policy.yaml'))) return undefined;
  return join(env.clusterDir, 'logs', 'audit.log');
}
