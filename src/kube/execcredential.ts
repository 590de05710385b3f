/**
 * A kubeconfig user's exec credential plugin (client.authentication.k8s.io ExecCredential, v1 and
 * v1beta1), run as client-go runs it: the command with its args, the kubeconfig's env on top of
 * ours, KUBERNETES_EXEC_INFO describing the call (never interactive here; the cluster when
 * provideClusterInfo is set), its stdout an ExecCredential whose status gives a token and/or a
 * client certificate and key, kept until its expirationTimestamp (for good when it has none) or
 * until the server refuses it (invalidate()).
 *
 * Written here because client-node 1.4.0 (exec_auth.js) spawns the plugin and keeps no handle on
 * it: a plugin that hangs can only be abandoned, each abandoned run a process left behind; it also
 * sends no KUBERNETES_EXEC_INFO and caches nothing when the credential has no expiry.
 *
 * Guarantees: one run at a time, shared by every caller; a run ends within timeoutMs: past it the
 * plugin's whole process group gets SIGTERM, then SIGKILL after killGraceMs, and the run fails.
 * The plugin's stdin is closed (no prompt can wait forever). Its stdout (the credential) is never
 * logged nor put in an error; its stderr goes to the log, shortened and with anything that looks
 * like a token masked, and without the secrets of its own arguments and env (redact.ts's rules:
 * a plugin that repeats its command line in an error message repeats them too). Its arguments
 * and env are never logged.
 */
import { spawn } from 'node:child_process';
import { redactText, scrub, secretsIn } from './redact.js';

/** The kubeconfig's `exec` stanza (client-go's ExecConfig), as client-node hands it over. */
export interface ExecConfig {
  command: string;
  args?: string[];
  env?: { name: string; value: string }[] | null;
  apiVersion?: string;
  installHint?: string;
  provideClusterInfo?: boolean;
  interactiveMode?: string;
}

/** What KUBERNETES_EXEC_INFO tells a plugin that asked for the cluster (provideClusterInfo). */
export interface ExecClusterInfo {
  server: string;
  'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean;
  'tls-server-name'?: string;
  'proxy-url'?: string;
}

export interface ExecCredential {
  token?: string;
  clientCertificateData?: string;
  clientKeyData?: string;
  /** Wall-clock ms; undefined: valid until the server refuses it. */
  expiresAt?: number;
}

export interface ExecPluginOptions {
  /** A run's deadline; default 60 s. */
  timeoutMs?: number;
  /** Between SIGTERM and SIGKILL; default 2 s. */
  killGraceMs?: number;
  cluster?: ExecClusterInfo;
  /** Wall clock in ms, for expirationTimestamp; default Date.now. */
  now?: () => number;
  /** Where the plugin's stderr goes (masked). */
  log?: { warn(msg: string, fields?: Record<string, unknown>): void };
}

const API_VERSIONS = ['client.authentication.k8s.io/v1', 'client.authentication.k8s.io/v1beta1'];
const STDOUT_LIMIT = 1 << 20;
const STDERR_LIMIT = 4096;

/**
 * Masks what looks like a credential: JWTs, Bearer values, `token=...`-style pairs, long opaque
 * strings, URL passwords (redact.ts).
 */
export function maskSecrets(text: string): string {
  return redactText(text)
    .replace(/eyJ[\w-]+\.[\w-]+\.[\w-]*/g, '***')
    .replace(/(bearer\s+)\S+/gi, '$1***')
    .replace(/((?:token|password|secret|key)["']?\s*[:=]\s*["']?)[^\s"',}]+/gi, '$1***')
    .replace(/[A-Za-z0-9+/_-]{40,}={0,2}/g, '***');
}

export class ExecCredentialPlugin {
  private cached: ExecCredential | undefined;
  private running: Promise<ExecCredential> | undefined;
  /** Ends the current run as its deadline would; set while a plugin runs. */
  private stopRun: (() => void) | undefined;
  private readonly timeoutMs: number;
  private readonly killGraceMs: number;
  private readonly now: () => number;
  private readonly name: string;
  /** What the plugin's stderr must not repeat: the secrets in its args and env (redact.ts). */
  private readonly secrets: string[];

  constructor(
    private readonly config: ExecConfig,
    private readonly options: ExecPluginOptions = {},
  ) {
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.killGraceMs = options.killGraceMs ?? 2_000;
    this.now = options.now ?? Date.now;
    this.name = `exec credential plugin ${JSON.stringify(redactText(config.command))}`;
    this.secrets = secretsIn(config.args ?? [], config.env ?? []);
  }

  /** The credential: the cached one while it is valid, else from a run shared by all callers. */
  credential(): Promise<ExecCredential> {
    const c = this.cached;
    if (c && (c.expiresAt === undefined || this.now() < c.expiresAt)) return Promise.resolve(c);
    this.cached = undefined;
    if (!this.running) {
      const run = this.run();
      this.running = run;
      const clear = (): void => {
        if (this.running === run) this.running = undefined;
      };
      run.then((cred) => {
        clear();
        this.cached = cred;
      }, clear);
    }
    return this.running;
  }

  /** Stops a running plugin (SIGTERM, then SIGKILL): nothing of ours outlives the client. */
  stop(): void {
    this.stopRun?.();
  }

  /** The server refused `token` (401): the next credential() runs the plugin again. */
  invalidate(token: string | undefined): void {
    if (this.cached && this.cached.token === token) this.cached = undefined;
  }

  private run(): Promise<ExecCredential> {
    const { config } = this;
    const apiVersion = config.apiVersion ?? '';
    if (!API_VERSIONS.includes(apiVersion)) {
      return Promise.reject(new Error(`${this.name}: apiVersion ${JSON.stringify(apiVersion)} is not one of ${API_VERSIONS.join(', ')}`));
    }
    if (config.interactiveMode === 'Always') {
      return Promise.reject(new Error(`${this.name} needs a terminal (interactiveMode: Always), which the operator never has`));
    }
    const info = {
      apiVersion,
      kind: 'ExecCredential',
      spec: { interactive: false, ...(config.provideClusterInfo && this.options.cluster ? { cluster: this.options.cluster } : {}) },
    };
    const env: NodeJS.ProcessEnv = { ...process.env };
    for (const e of config.env ?? []) env[e.name] = e.value;
    env.KUBERNETES_EXEC_INFO = JSON.stringify(info);

    return new Promise((resolve, reject) => {
      // Its own process group (detached), so that the kill reaches whatever the plugin started.
      const child = spawn(config.command, config.args ?? [], { env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
      let stdout = '';
      let stderr = '';
      let settled = false;
      let exited = false;
      let killTimer: NodeJS.Timeout | undefined;
      const signalGroup = (sig: NodeJS.Signals): void => {
        if (exited || child.pid === undefined) return;
        try {
          process.kill(-child.pid, sig);
        } catch {
          child.kill(sig); // no process group (e.g. a runtime without one): the plugin itself
        }
      };
      const finish = (err: Error | undefined, cred?: ExecCredential): void => {
        if (settled) return;
        settled = true;
        this.stopRun = undefined;
        clearTimeout(deadline);
        if (err) reject(err);
        else resolve(cred!);
      };
      const stop = (why: string): void => {
        finish(new Error(`${this.name} ${why}; stopped it`));
        signalGroup('SIGTERM');
        killTimer = setTimeout(() => signalGroup('SIGKILL'), this.killGraceMs);
      };
      const deadline = setTimeout(() => stop(`did not answer within ${this.timeoutMs} ms`), this.timeoutMs);
      this.stopRun = () => stop('was still running when the client closed');
      child.stdout.setEncoding('utf8').on('data', (d: string) => {
        if (stdout.length < STDOUT_LIMIT) stdout += d;
      });
      child.stderr.setEncoding('utf8').on('data', (d: string) => {
        if (stderr.length < STDERR_LIMIT) stderr += d;
      });
      child.once('error', (err: NodeJS.ErrnoException) => {
        exited = true;
        const hint = err.code === 'ENOENT' && config.installHint ? `; ${config.installHint}` : '';
        finish(new Error(`${this.name} could not run: ${redactText(err.message)}${hint}`));
      });
      child.once('exit', () => {
        exited = true;
        // The group may outlive its leader: finish what the deadline started.
        if (killTimer) {
          clearTimeout(killTimer);
          try {
            process.kill(-child.pid!, 'SIGKILL');
          } catch {
            // already gone
          }
        }
      });
      child.once('close', (code, signal) => {
        const said = stderr.trim();
        if (said) {
          const stderr = maskSecrets(scrub(said, this.secrets));
          this.options.log?.warn('exec credential plugin wrote to stderr', { command: redactText(config.command), stderr });
        }
        if (code !== 0) {
          finish(new Error(`${this.name} failed: ${code === null ? `killed by ${signal}` : `exit code ${code}`}`));
          return;
        }
        try {
          finish(undefined, this.parse(stdout, apiVersion));
        } catch (err) {
          finish(err as Error);
        }
      });
    });
  }

  /** The credential in the plugin's output; errors never quote the output (it holds secrets). */
  private parse(stdout: string, apiVersion: string): ExecCredential {
    let out: { apiVersion?: string; kind?: string; status?: Record<string, unknown> };
    try {
      out = JSON.parse(stdout) as typeof out;
    } catch {
      throw new Error(`${this.name} wrote no ExecCredential JSON to stdout`);
    }
    if (out?.kind !== 'ExecCredential' || out.apiVersion !== apiVersion) {
      throw new Error(`${this.name} answered ${out?.apiVersion}/${out?.kind}, expected ${apiVersion}/ExecCredential`);
    }
    const s = out.status ?? {};
    const str = (k: string): string | undefined => (typeof s[k] === 'string' && s[k] !== '' ? s[k] : undefined);
    const cred: ExecCredential = {
      token: str('token'),
      clientCertificateData: str('clientCertificateData'),
      clientKeyData: str('clientKeyData'),
    };
    if (!cred.token && !(cred.clientCertificateData && cred.clientKeyData)) {
      throw new Error(`${this.name} gave neither a token nor a client certificate and key`);
    }
    if (!cred.clientCertificateData !== !cred.clientKeyData) {
      throw new Error(`${this.name} gave a client certificate without its key, or a key without its certificate`);
    }
    const expiry = str('expirationTimestamp');
    if (expiry !== undefined) {
      const at = Date.parse(expiry);
      if (Number.isNaN(at)) throw new Error(`${this.name} gave an expirationTimestamp that is not a time: ${JSON.stringify(expiry)}`);
      cred.expiresAt = at;
    }
    return cred;
  }
}
