/**
 * The unit tier on every supported Node line (NODE_LINES), for `npm test`: the main run is on this
 * Node (the main line's, MAIN_NODE_LINE, when started by `npm test`); each other line runs the same
 * unit files with its own binary, one line after another, after the main run (beside it they took
 * CPU from the e2e tier's timing-sensitive cases). A line whose major is this Node's is left out:
 * the main run covers it.
 *
 * TEST_NODE_LINES narrows it: unset runs every supported line; a comma-separated list of majors
 * (e.g. `26` or `24,26`) runs those; empty runs none. Anything else stops the run naming the
 * setting and the accepted values.
 *
 * Each line runs its files in one process (scripts/testbed/unit-process.ts), as a run of only unit files
 * does on this Node. Each line's output is kept and printed only when it fails (four spec
 * reporters interleaved would be unreadable); a passing line prints one summary line.
 */
import { spawn } from 'node:child_process';
import { ControlPlaneError } from '../ship/errors.js';
import { NODE_LINES, nodeBinary, nodeMajor } from '../ship/runtimes.js';

/** The versions TEST_NODE_LINES selects, without this Node's line; throws on a bad value. */
export function selectedLines(env: NodeJS.ProcessEnv = process.env, current = process.versions.node): string[] {
  const setting = env.TEST_NODE_LINES;
  const majors = NODE_LINES.map(nodeMajor);
  let wanted: string[] = majors;
  if (setting !== undefined) {
    wanted = setting.trim() === '' ? [] : setting.split(',').map((m) => m.trim());
    const bad = wanted.filter((m) => !majors.includes(m));
    if (bad.length)
      throw new ControlPlaneError(
        `TEST_NODE_LINES=${setting}: ${bad.join(', ')} is not a supported Node line; accepted: a comma-separated list of ${majors.join(', ')}, or empty for none`,
      );
  }
  return NODE_LINES.filter((v) => wanted.includes(nodeMajor(v)) && nodeMajor(v) !== nodeMajor(current));
}

/** Node's arguments that run unit test files in one process (scripts/testbed/unit-process.ts), with the spec report. */
export function unitProcessArgs(files: string[]): string[] {
  return ['--import', 'tsx', '--test-reporter=spec', 'scripts/testbed/unit-process.ts', ...files];
}

/** What one line's run ended with: its exit code, wall time and kept output. */
interface LineResult {
  version: string;
  code: number;
  seconds: number;
  output: string;
}

function runLine(version: string, node: string, files: string[], signal?: AbortSignal): Promise<LineResult> {
  const started = Date.now();
  const child = spawn(node, unitProcessArgs(files), { stdio: ['ignore', 'pipe', 'pipe'], signal });
  child.on('error', () => {}); // an abort: 'close' follows with the signal, reported as a failure
  const chunks: Buffer[] = [];
  child.stdout.on('data', (c: Buffer) => chunks.push(c));
  child.stderr.on('data', (c: Buffer) => chunks.push(c));
  return new Promise((resolve) =>
    child.on('close', (code) =>
      resolve({ version, code: code ?? 1, seconds: (Date.now() - started) / 1000, output: Buffer.concat(chunks).toString('utf8') }),
    ),
  );
}

/** The `ℹ tests N` / `ℹ fail N` counts of a spec report, for the summary line. */
function counts(output: string): string {
  const count = (what: string) => new RegExp(`^ℹ ${what} (\\d+)$`, 'm').exec(output)?.[1] ?? '?';
  return `${count('pass')} passed, ${count('fail')} failed`;
}

/**
 * Runs `files` (unit tests) on each selected line in turn; resolves to 0 when every line passed.
 * Each binary is installed here, before its run, so two processes never install one at once.
 * `signal` stops the line running (SIGTERM) and the ones after it.
 */
export async function unitTierOnLines(files: string[], signal?: AbortSignal): Promise<number> {
  let code = 0;
  for (const version of selectedLines()) {
    if (signal?.aborted) return 1;
    const node = nodeBinary(version);
    if (!node.path) {
      console.error(`tests: unit tier on Node ${version}: ${node.reason}`);
      code = 1;
      continue;
    }
    const r = await runLine(version, node.path, files, signal);
    if (r.code !== 0) process.stderr.write(r.output);
    console.error(
      `tests: unit tier on Node ${version}: ${r.code === 0 ? 'ok' : `FAILED (exit ${r.code})`}, ${counts(r.output)} in ${r.seconds.toFixed(0)} s`,
    );
    code ||= r.code;
  }
  return code;
}
