/**
 * docs/benchmarks.md: this tool owns only the sections between its markers
 *
 *   <!-- bench:ID begin --> ... <!-- bench:ID end -->
 *
 * and replaces exactly those it measured in this run; everything else in the file is left byte
 * for byte as it was. `npm run bench:dist` (distribution.ts) writes its section through it too. A section seen for
 * the first time goes after the last section of the same benchmark, else at the end.
 */
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { cpus, loadavg, totalmem, release } from 'node:os';
import type { BenchEnv } from './common.js';

export interface Section {
  /** e.g. "throughput" (the benchmark's intro) or "throughput:n=1000" (one result block). */
  id: string;
  markdown: string;
  /** Files the markdown links to (e.g. a chart), by name: written beside the document. */
  assets?: Record<string, string>;
}

export interface Machine {
  cpu: string;
  cores: number;
  ramGiB: number;
  node: string;
  kubernetes: string;
  kernel: string;
}

export function machine(env: BenchEnv): Machine {
  const c = cpus();
  return {
    cpu: c[0]?.model.trim() ?? 'unknown',
    cores: c.length,
    ramGiB: Math.round((totalmem() / 2 ** 30) * 10) / 10,
    node: process.version,
    kubernetes: env.kubernetesVersion,
    kernel: `Linux ${release()}`,
  };
}

export function machineLine(m: Machine): string {
  return `${m.cpu}, ${m.cores} cores, ${m.ramGiB} GiB RAM, ${m.kernel}, Node ${m.node}, Kubernetes ${m.kubernetes}`;
}

export function loadLine(): string {
  return loadavg()
    .map((l) => l.toFixed(2))
    .join(' / ');
}

/** "Measured ..." preamble shared by every result block. */
export function provenance(env: BenchEnv, m: Machine, extra: string, load: string): string {
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  return [
    `Measured ${date} on ${machineLine(m)}; the control plane (etcd, kube-apiserver, kube-controller-manager) runs on the same machine.`,
    `Operator: ${env.operator.describe}. ${extra}Load average (1/5/15 min) at the start: ${load}.`,
  ].join('\n');
}

const begin = (id: string): string => `<!-- bench:${id} begin -->`;
const end = (id: string): string => `<!-- bench:${id} end -->`;

const HEADER = `# Benchmarks

Numbers from \`npm run bench\` (scripts/lab/bench/); \`npm run bench -- --help\` lists the options.
Sections marked \`bench:\` are rewritten by that command; write elsewhere in this file by hand.
`;

/**
 * order: the benchmarks in the order their sections should appear; a benchmark's first section
 * goes before the sections of any benchmark after it, so the file reads in that order whatever
 * order the runs happened in.
 */
export function updateDoc(path: string, sections: Section[], order: readonly string[] = []): void {
  let doc = existsSync(path) ? readFileSync(path, 'utf8') : HEADER;
  for (const s of sections) {
    const block = `${begin(s.id)}\n${s.markdown.trim()}\n${end(s.id)}`;
    const b = doc.indexOf(begin(s.id));
    const e = doc.indexOf(end(s.id));
    if (b >= 0 && e > b) {
      doc = doc.slice(0, b) + block + doc.slice(e + end(s.id).length);
      continue;
    }
    // After the last block of the same benchmark ("throughput" or "throughput:..."), else at the end.
    const bench = s.id.split(':')[0]!;
    const re = new RegExp(`<!-- bench:${bench}(:[^ ]*)? end -->`, 'g');
    let insertAt = -1;
    for (const m of doc.matchAll(re)) insertAt = m.index + m[0].length;
    if (insertAt < 0) {
      // Before the first section of a benchmark that comes later in `order`.
      const later = order.slice(order.indexOf(bench) + 1);
      const next =
        order.indexOf(bench) < 0
          ? undefined
          : [...doc.matchAll(/<!-- bench:([a-z]+)(:[^ ]*)? begin -->/g)].find((m) => later.includes(m[1]!));
      if (next) {
        doc = `${doc.slice(0, next.index)}${block}\n\n${doc.slice(next.index)}`;
        continue;
      }
    }
    if (insertAt >= 0) doc = `${doc.slice(0, insertAt)}\n\n${block}${doc.slice(insertAt)}`;
    else doc = `${doc.trimEnd()}\n\n${block}\n`;
  }
  for (const s of sections)
    for (const [name, content] of Object.entries(s.assets ?? {})) writeAtomically(join(dirname(path), name), content);
  writeAtomically(path, doc.endsWith('\n') ? doc : `${doc}\n`);
}

function writeAtomically(path: string, content: string): void {
  const tmp = `${path}.tmp-${process.pid}`;
  writeFileSync(tmp, content);
  renameSync(tmp, path);
}
