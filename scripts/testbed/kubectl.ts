/**
 * The one way the tooling and the tests run kubectl: against an explicit kubeconfig (never the
 * user's current context by accident), as `run` (the result, whatever the exit code), `ok` (stdout,
 * or a KubectlError naming the command and kubectl's message), `json` (`-o json`, parsed) and
 * `okAsync` (the same as `ok` without blocking the event loop, for callers that serve or read
 * something meanwhile, e.g. the benchmarks).
 *
 * Guarantees: every call has a deadline (kubectl is killed at it: 120 s unless told), output up to
 * 256 MiB is read whole, and a missing kubectl is an error that says to install it. Errors are
 * ControlPlaneErrors, so a script's exitWithError prints them without a stack.
 */
import { spawn, spawnSync } from 'node:child_process';
import { ControlPlaneError } from '../ship/errors.js';

export interface KubectlResult {
  code: number;
  stdout: string;
  stderr: string;
}

export interface KubectlOptions {
  /** Written to kubectl's stdin (`-f -`). */
  input?: string;
  /** `-n`; absent: the kubeconfig context's namespace. */
  namespace?: string;
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Deadline of this call; the Kubectl's default when absent. */
  timeoutMs?: number;
}

export interface Kubectl {
  readonly kubeconfig: string;
  run(args: string[], opts?: KubectlOptions): KubectlResult;
  /** Must succeed; returns stdout. */
  ok(args: string[], opts?: KubectlOptions): string;
  /** `-o json`, parsed as the type the caller names (the API server's type of what it asked for). */
  json<T>(args: string[], opts?: KubectlOptions): T;
  /** `ok` without blocking the event loop. */
  okAsync(args: string[], opts?: KubectlOptions): Promise<string>;
}

export class KubectlError extends ControlPlaneError {
  constructor(
    readonly args: string[],
    readonly result: KubectlResult,
  ) {
    super(`kubectl ${args.join(' ')} failed (${result.code}): ${result.stderr.trim()}`);
    this.name = 'KubectlError';
  }
}

const MAX_BUFFER = 256 << 20;
const NOT_FOUND_HINT = '(install kubectl and put it on PATH)';

export function kubectlFor(kubeconfig: string, defaults: { timeoutMs?: number } = {}): Kubectl {
  const argv = (args: string[], opts: KubectlOptions): string[] => [
    '--kubeconfig',
    kubeconfig,
    ...(opts.namespace ? ['-n', opts.namespace] : []),
    ...args,
  ];
  const timeoutOf = (opts: KubectlOptions): number => opts.timeoutMs ?? defaults.timeoutMs ?? 120_000;
  const envOf = (opts: KubectlOptions): NodeJS.ProcessEnv | undefined => (opts.env ? { ...process.env, ...opts.env } : undefined);
  const errorText = (err: Error): string =>
    (err as NodeJS.ErrnoException).code === 'ENOENT' ? `could not run kubectl: ${err.message} ${NOT_FOUND_HINT}` : String(err);

  const run = (args: string[], opts: KubectlOptions = {}): KubectlResult => {
    const r = spawnSync('kubectl', argv(args, opts), {
      input: opts.input,
      encoding: 'utf8',
      env: envOf(opts),
      timeout: timeoutOf(opts),
      maxBuffer: MAX_BUFFER,
    });
    // An error with an exit status (EPIPE: kubectl exited before reading its input) is kubectl's to explain.
    const stderr = r.error && r.status === null ? errorText(r.error) : (r.stderr ?? '');
    return { code: r.status ?? -1, stdout: r.stdout ?? '', stderr };
  };
  const ok = (args: string[], opts: KubectlOptions = {}): string => {
    const r = run(args, opts);
    if (r.code !== 0) throw new KubectlError(args, r);
    return r.stdout;
  };
  const okAsync = (args: string[], opts: KubectlOptions = {}): Promise<string> =>
    new Promise((resolve, reject) => {
      const stdin = opts.input === undefined ? 'ignore' : 'pipe';
      // The deadline is ours, not spawn's `timeout`: that one's timer outlives a kubectl that never started.
      const child = spawn('kubectl', argv(args, opts), { stdio: [stdin, 'pipe', 'pipe'], env: envOf(opts) });
      const deadline = setTimeout(() => child.kill('SIGKILL'), timeoutOf(opts));
      let stdout = '';
      let stderr = '';
      child.stdout?.on('data', (d) => (stdout += d));
      child.stderr?.on('data', (d) => (stderr += d));
      child.on('error', (err) => {
        clearTimeout(deadline);
        reject(new KubectlError(args, { code: -1, stdout, stderr: errorText(err) }));
      });
      child.on('close', (code, signal) => {
        clearTimeout(deadline);
        if (code === 0) resolve(stdout);
        else reject(new KubectlError(args, { code: code ?? -1, stdout, stderr: signal ? `${stderr}killed by ${signal}` : stderr }));
      });
      // A kubectl that exits before reading its input (a bad flag) breaks the pipe: its exit code says why.
      child.stdin?.on('error', () => {});
      child.stdin?.end(opts.input);
    });
  return {
    kubeconfig,
    run,
    ok,
    okAsync,
    json: <T>(args: string[], opts: KubectlOptions = {}) => JSON.parse(ok([...args, '-o', 'json'], opts)) as T,
  };
}
