/**
 * `npm run synth` (infra/main.ts) as a user runs it, into a temporary folder: its exit status,
 * what it printed, and the objects of echoperator.k8s.yaml when it succeeded. runSynth starts a
 * process per run; runSynthInSharedProcess runs it in one process kept for the test file
 * (synth-process.ts), which pays cdk8s's import once instead of per run.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { Manifest } from '../../infra/chart.js';
import { within } from './eventually.js';

export interface SynthRun {
  status: number | null;
  stdout: string;
  stderr: string;
  /** The objects written, [] when nothing was. */
  objects: Manifest[];
  /** The files written (name -> text): the CRDs' and the install's. */
  files: Record<string, string>;
}

/**
 * Runs synth with `args`, after writing `files` (name -> text) into its folder; `{dir}` in an
 * argument is that folder. ECHOPERATOR_HA is unset, so only the arguments decide.
 */
export function runSynth(t: TestContext, args: string[], files: Record<string, string> = {}): SynthRun {
  const dir = runFolder(t, files);
  const out = join(dir, 'out');
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'infra/main.ts', ...args.map((a) => a.replaceAll('{dir}', dir))], {
    encoding: 'utf8',
    env: { ...process.env, CDK8S_OUTDIR: out, ECHOPERATOR_HA: '' },
    timeout: RUN_TIMEOUT_MS,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr, ...written(r.status === 0 ? folderFiles(out) : {}) };
}

/** The files in dir (name -> text); none when it does not exist. */
export function folderFiles(dir: string): Record<string, string> {
  return existsSync(dir) ? Object.fromEntries(readdirSync(dir).map((name) => [name, readFileSync(join(dir, name), 'utf8')])) : {};
}

/**
 * As runSynth, in the process this test file shares for its runs (started by the first call,
 * ending with the file): the same module run with the same arguments, environment and folder
 * layout, without a process start per run. For the CLI's own process behaviour use runSynth.
 */
export async function runSynthInSharedProcess(
  t: TestContext,
  args: string[],
  files: Record<string, string> = {},
  env: Record<string, string> = {},
): Promise<SynthRun> {
  const dir = runFolder(t, files);
  const request: SynthRequest = { args: args.map((a) => a.replaceAll('{dir}', dir)), env };
  const reply = await within(`synth ${request.args.join(' ')}`, sharedProcess().ask(request), RUN_TIMEOUT_MS);
  return { status: reply.status, stdout: reply.stdout, stderr: reply.stderr, ...written(reply.files) };
}

// A guard against a hung run, not a speed bound: the first run of a file also starts the process and imports cdk8s, which on a loaded machine took over 60 s.
const RUN_TIMEOUT_MS = 180_000;

/** A temporary folder for one run, with `files` written into it; removed after the test. */
function runFolder(t: TestContext, files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-synth-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

/** The files, and the objects of echoperator.k8s.yaml among them. */
function written(files: Record<string, string>): { objects: Manifest[]; files: Record<string, string> } {
  const install = files['echoperator.k8s.yaml'];
  return { objects: install === undefined ? [] : parseAllDocuments(install).map((d) => d.toJSON() as Manifest), files };
}

/** What runSynthInSharedProcess sends its process: the arguments after `npm run synth --`. */
export interface SynthRequest {
  args: string[];
  /** Set for this run only (ECHOPERATOR_HA, say). */
  env?: Record<string, string>;
}

/** What that process answers: as a process's exit status and output, plus the objects' file. */
export interface SynthReply {
  status: number;
  stdout: string;
  stderr: string;
  /** The files written (name -> text), none when the run failed. */
  files: Record<string, string>;
}

interface SharedProcess {
  ask(request: SynthRequest): Promise<SynthReply>;
}

let shared: SharedProcess | undefined;

/**
 * The file's synth process. Requests go one at a time; while none is pending the child does not
 * keep this process alive, and it exits when this one does (its IPC channel closes).
 */
function sharedProcess(): SharedProcess {
  if (shared) return shared;
  const out = mkdtempSync(join(tmpdir(), 'echoperator-synth-out-'));
  process.on('exit', () => rmSync(out, { recursive: true, force: true }));
  const child: ChildProcess = spawn(process.execPath, ['--import', 'tsx', 'test/support/synth-process.ts'], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    env: { ...process.env, CDK8S_OUTDIR: out, ECHOPERATOR_HA: '' },
  });
  const idle = (): void => {
    child.unref();
    child.channel?.unref();
  };
  idle();
  let last: Promise<unknown> = Promise.resolve();
  const ask = (request: SynthRequest): Promise<SynthReply> =>
    new Promise<SynthReply>((resolve, reject) => {
      if (child.exitCode !== null || child.signalCode !== null) {
        reject(new Error(`the synth process ended (${child.exitCode ?? child.signalCode})`));
        return;
      }
      const ended = (code: number | null, signal: string | null): void =>
        reject(new Error(`the synth process ended (${code ?? signal}) before answering`));
      child.once('exit', ended);
      child.once('message', (reply: SynthReply) => {
        child.off('exit', ended);
        idle();
        resolve(reply);
      });
      child.ref();
      child.channel?.ref();
      child.send(request);
    });
  shared = {
    ask: (request) => {
      const answer = last.then(
        () => ask(request),
        () => ask(request),
      );
      last = answer;
      return answer;
    },
  };
  return shared;
}
