/**
 * Reading Prometheus text from an operator's /metrics.
 */
import { type OperatorHandle } from './operator.js';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export function parseProm(text: string): Sample[] {
  const out: Sample[] = [];
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})?\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    if (m[3]) for (const l of m[3].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    out.push({ name: m[1]!, labels, value: Number(m[4]) });
  }
  return out;
}

export function sumOf(samples: Sample[], name: string, match: Record<string, string | RegExp> = {}): number {
  let total = 0;
  for (const s of samples) {
    if (s.name !== name) continue;
    let ok = true;
    for (const [k, v] of Object.entries(match)) {
      const actual = s.labels[k] ?? '';
      if (typeof v === 'string' ? actual !== v : !v.test(actual)) ok = false;
    }
    if (ok) total += s.value;
  }
  return total;
}

export async function operatorMetrics(op: OperatorHandle): Promise<Sample[]> {
  const res = await fetch(`http://127.0.0.1:${op.metricsPort}/metrics`, { signal: AbortSignal.timeout(10_000) });
  return parseProm(await res.text());
}

/** The Echo controller has reconciled at least minReconciles times and nothing is queued or in flight. */
export async function echoQueueDrained(op: OperatorHandle, minReconciles: number): Promise<boolean> {
  const m = await operatorMetrics(op).catch(() => undefined);
  if (!m) return false;
  return (
    sumOf(m, 'controller_runtime_reconcile_total', { controller: 'echo' }) >= minReconciles &&
    sumOf(m, 'workqueue_depth', { name: 'echo' }) === 0 &&
    sumOf(m, 'controller_runtime_active_workers', { controller: 'echo' }) === 0
  );
}
