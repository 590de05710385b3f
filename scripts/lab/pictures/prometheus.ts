/**
 * Debian's Prometheus (/usr/bin/prometheus) run inside a local node's network namespace, where the
 * pod network and the API server's node address are routed, listening on that namespace's
 * loopback; its HTTP API is read with curl from the same namespace.
 *
 * Guarantees: stop() ends the process (SIGTERM, then waits for it) and removes its data folder; it
 * is idempotent, so a caller may run it both in a finally and in an after hook. A failed API call
 * throws with the tail of Prometheus' own log.
 */
import { spawn, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';

/** One series of an instant query: its labels and [unix seconds, value]. */
export interface InstantSample {
  metric: Record<string, string>;
  value: [number, string];
}

/** One series of a range query: its labels and [unix seconds, value] pairs. */
export interface RangeSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

export interface ActiveTarget {
  labels: Record<string, string>;
  health: 'up' | 'down' | 'unknown';
  lastError: string;
}

export interface ActiveAlert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
}

export interface RuleState {
  name: string;
  type: 'alerting' | 'recording';
  state?: 'inactive' | 'pending' | 'firing';
  health: string;
  lastError?: string;
  lastEvaluation: string;
}

export interface PrometheusOptions {
  /** The network namespace's name (under /run/netns). */
  netns: string;
  /** A folder of the caller's: the config, the rules file and the data go there. */
  dir: string;
  /** prometheus.yml, as data. `rule_files` is set by `rules`. */
  config: Record<string, unknown>;
  /** A rules file's content ({ groups }), as data. */
  rules?: { groups: unknown[] };
  /** Prometheus' stderr lines (its log), for a caller that keeps them. */
  log?: (line: string) => void;
  /**
   * Files at fixed paths, for a config written for a pod (prometheus-operator's): Prometheus runs
   * in a private mount namespace (unshare -m, gone with it) where each `tmpfs` folder is an empty
   * tmpfs and each `binds` target (made under one) shows its source folder.
   */
  privateMounts?: { tmpfs: string[]; binds: Record<string, string> };
  /** Extra environment, e.g. KUBERNETES_SERVICE_HOST/PORT for in-cluster discovery. */
  env?: Record<string, string>;
}

export interface Prometheus {
  /** The data folder (the test checks no process holds it after stop). */
  dataDir: string;
  query(expr: string, time?: number): InstantSample[];
  queryRange(expr: string, start: number, end: number, stepSeconds: number): RangeSeries[];
  targets(): ActiveTarget[];
  alerts(): ActiveAlert[];
  rules(): RuleState[];
  stop(): Promise<void>;
}

/** The command prefix that runs the rest in a private mount namespace with these mounts. */
function inPrivateMounts(m: { tmpfs: string[]; binds: Record<string, string> }): string[] {
  const quote = (s: string): string => `'${s.replaceAll("'", "'\\''")}'`;
  const steps = [
    ...m.tmpfs.map((dir) => `mount -t tmpfs -o size=4m,mode=0755 tmpfs ${quote(dir)}`),
    ...Object.entries(m.binds).map(([target, source]) => `mkdir -p ${quote(target)} && mount --bind ${quote(source)} ${quote(target)}`),
  ];
  return ['unshare', '--mount', '--propagation', 'private', '--', 'sh', '-ec', `${steps.join('\n')}\nexec "$@"`, 'sh'];
}

/** A random port on the namespace's loopback (nothing else listens there but the node's own). */
const webPort = (): number => 19_000 + Math.floor(Math.random() * 900);

/** Starts Prometheus and resolves once it answers /-/ready; rejects, with its log, if it exits first. */
export async function startPrometheus(o: PrometheusOptions): Promise<Prometheus> {
  const configFile = join(o.dir, 'prometheus.yml');
  const rulesFile = join(o.dir, 'rules.yml');
  if (o.rules) writeFileSync(rulesFile, stringify(o.rules));
  writeFileSync(configFile, stringify({ ...o.config, ...(o.rules ? { rule_files: [rulesFile] } : {}) }));
  const netns = `/run/netns/${o.netns}`;
  const port = webPort();
  const dataDir = join(o.dir, 'data');
  const prometheus = [
    'prometheus',
    `--config.file=${configFile}`,
    `--storage.tsdb.path=${dataDir}`,
    `--web.listen-address=127.0.0.1:${port}`,
  ];
  const proc = spawn('nsenter', [`--net=${netns}`, ...(o.privateMounts ? inPrivateMounts(o.privateMounts) : []), ...prometheus], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...o.env },
  });
  let tail = '';
  proc.stderr.on('data', (d: Buffer) => {
    const text = d.toString('utf8');
    tail = (tail + text).slice(-8000);
    if (o.log) for (const line of text.split('\n')) if (line) o.log(line);
  });
  const exited = new Promise<void>((resolve) => proc.on('close', () => resolve()));
  let stopped: Promise<void> | undefined;

  const api = <T>(path: string): T => {
    const r = spawnSync('nsenter', [`--net=${netns}`, 'curl', '-sS', '--fail-with-body', `http://127.0.0.1:${port}${path}`], {
      encoding: 'utf8',
      timeout: 15_000,
    });
    if (r.status !== 0) throw new Error(`prometheus ${path}: curl exit ${r.status}: ${r.stderr}${r.stdout}\n${tail.slice(-2000)}`);
    return (JSON.parse(r.stdout) as { data: T }).data;
  };
  const q = encodeURIComponent;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (proc.exitCode !== null || proc.signalCode !== null) throw new Error(`prometheus exited at start: ${tail.slice(-2000)}`);
    const ready = spawnSync('nsenter', [`--net=${netns}`, 'curl', '-sf', `http://127.0.0.1:${port}/-/ready`], { timeout: 5_000 });
    if (ready.status === 0) break;
    if (Date.now() > deadline) {
      proc.kill('SIGTERM');
      throw new Error(`prometheus not ready within 60 s: ${tail.slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }

  return {
    dataDir,
    query: (expr, time) => api<{ result: InstantSample[] }>(`/api/v1/query?query=${q(expr)}${time ? `&time=${time}` : ''}`).result,
    queryRange: (expr, start, end, step) =>
      api<{ result: RangeSeries[] }>(`/api/v1/query_range?query=${q(expr)}&start=${start}&end=${end}&step=${step}`).result,
    targets: () => api<{ activeTargets: ActiveTarget[] }>('/api/v1/targets?state=active').activeTargets,
    alerts: () => api<{ alerts: ActiveAlert[] }>('/api/v1/alerts').alerts,
    rules: () => api<{ groups: { rules: RuleState[] }[] }>('/api/v1/rules').groups.flatMap((g) => g.rules),
    stop: () =>
      (stopped ??= (async () => {
        if (proc.exitCode === null && proc.signalCode === null) proc.kill('SIGTERM');
        await exited;
        rmSync(dataDir, { recursive: true, force: true });
      })()),
  };
}
