/**
 * `npm run synth` (infra/main.ts) as a user runs it, into a temporary folder: its exit status,
 * what it printed, and the objects of echoperator.k8s.yaml when it succeeded.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { Manifest } from '../../infra/chart.js';

export interface SynthRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** The objects written, [] when nothing was. */
  objects: Manifest[];
}

/**
 * Runs synth with `args`, after writing `files` (name -> text) into its folder; `{dir}` in an
 * argument is that folder. ECHOPERATOR_HA is unset, so only the arguments decide.
 */
export function runSynth(t: TestContext, args: string[], files: Record<string, string> = {}): SynthRun {
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-synth-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const out = join(dir, 'out');
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'infra/main.ts', ...args.map((a) => a.replaceAll('{dir}', dir))], {
    encoding: 'utf8',
    env: { ...process.env, CDK8S_OUTDIR: out, ECHOPERATOR_HA: '' },
    timeout: 60_000,
  });
  const written = join(out, 'echoperator.k8s.yaml');
  const objects =
    r.status === 0 && existsSync(written) ? parseAllDocuments(readFileSync(written, 'utf8')).map((d) => d.toJSON() as Manifest) : [];
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, objects };
}
