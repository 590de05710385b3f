/**
 * The child process behind runSynthInSharedProcess() (synth.ts): runs `npm run synth`'s module,
 * infra/main.ts, once per request from the parent (an IPC message with the arguments), each time
 * as a fresh module instance with its own process.argv, so a run is the command line minus the
 * process start. What it prints is captured, its exit code is process.exitCode as it left it,
 * and the output folder (CDK8S_OUTDIR, the same for every run) is emptied before each run so a
 * refused run never shows an earlier run's files. Requests are served one at a time.
 *
 * Why: importing cdk8s and the construct costs ~2 s of CPU per process, and the values and CLI
 * tests synthesize dozens of times; here that import is paid once per test file.
 */
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { folderFiles, type SynthReply, type SynthRequest } from './synth.js';

const MAIN = resolve('infra/main.ts');
const outdir = process.env.CDK8S_OUTDIR;
let runs = 0;

async function run({ args, env = {} }: SynthRequest): Promise<SynthReply> {
  if (!outdir) throw new Error('CDK8S_OUTDIR is not set');
  rmSync(outdir, { recursive: true, force: true });
  const out: string[] = [];
  const err: string[] = [];
  const { stdout, stderr } = process;
  const writeOut = stdout.write.bind(stdout);
  const writeErr = stderr.write.bind(stderr);
  stdout.write = (chunk: string | Uint8Array) => out.push(String(chunk)) > 0;
  stderr.write = (chunk: string | Uint8Array) => err.push(String(chunk)) > 0;
  process.exitCode = undefined;
  process.argv = [process.execPath, MAIN, ...args];
  const envBefore = Object.fromEntries(Object.keys(env).map((name) => [name, process.env[name]]));
  Object.assign(process.env, env);
  try {
    // A new query is a new module instance: its top level (parse argv, synthesize) runs again.
    await import(`${pathToFileURL(MAIN).href}?run=${++runs}`);
  } catch (error) {
    // Uncaught in a real process: printed, exit 1.
    err.push(String(error instanceof Error ? error.stack : error));
    process.exitCode = 1;
  } finally {
    stdout.write = writeOut;
    stderr.write = writeErr;
    for (const [name, value] of Object.entries(envBefore)) {
      if (value === undefined) delete process.env[name];
      else process.env[name] = value;
    }
  }
  const status = Number(process.exitCode ?? 0);
  process.exitCode = 0;
  return { status, stdout: out.join(''), stderr: err.join(''), files: status === 0 ? folderFiles(outdir) : {} };
}

let served = Promise.resolve();
process.on('message', (request: SynthRequest) => {
  served = served.then(async () => {
    process.send!(await run(request));
  });
});
// The parent gone (its test file done, or killed): nothing more will be asked.
process.on('disconnect', () => process.exit(0));
