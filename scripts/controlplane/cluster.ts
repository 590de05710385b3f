/**
 * Starts and stops a local control plane: etcd, kube-apiserver (RBAC on, PodSecurity admission
 * built in) and kube-controller-manager, on loopback and ephemeral ports, all state in one folder.
 *
 * The folder holds state.json (pids, ports, kubeconfig), so `cluster:down` stops exactly the
 * processes it started: a pid is only signalled when its command line still names that folder,
 * which guards against a pid reused by an unrelated process.
 */
import { spawn } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { ensureBinaries, isAlive, KUBERNETES_VERSION, type ControlPlaneBinaries } from './assets.js';
import { ControlPlaneError, formatDuration } from './errors.js';
import { generatePki, type Pki } from './pki.js';

/** Controllers the operator's tests rely on: GC for owner references, Job/CronJob, Deployments. */
const CONTROLLERS = [
  'garbage-collector-controller',
  'job-controller',
  'cronjob-controller',
  'deployment-controller',
  'replicaset-controller',
  'namespace-controller',
  'ttl-after-finished-controller',
  'resourcequota-controller',
];

/**
 * The audit log (logs/audit.log) records who wrote what: one JSON line (Metadata level: verb,
 * resource, namespace, name, User-Agent, response code; no bodies) per write to the resources the
 * operator touches. Reads and other resources (e.g. the job controller's Pods) are not logged,
 * so it stays small and cheap; the file is capped at 100 MB plus one rotated file. The benchmarks
 * count an operator's exact writes from it (scripts/bench/apiwrites.ts).
 */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  verbs: [create, update, patch, delete, deletecollection]
  resources:
  - group: mmontes.io
  - group: batch
    resources: [jobs, cronjobs]
  - group: ""
    resources: [events]
  - group: coordination.k8s.io
    resources: [leases]
- level: None
`;

export interface ControlPlaneState {
  dir: string;
  kubeconfig: string;
  server: string;
  kubernetesVersion: string;
  ports: { etcd: number; etcdPeer: number; apiserver: number };
  pids: { etcd: number; kubeApiserver: number; kubeControllerManager: number };
  startedAt: string;
  /**
   * How kube-apiserver was launched, so restartApiserver() can start it again exactly so (same
   * port, same etcd, same certificates). Absent in states written by older versions.
   */
  apiserver?: { bin: string; args: string[]; detached: boolean };
}

export interface StartOptions {
  dir: string;
  /** Detached processes outlive the caller (cluster:up); attached ones die with its group (tests). */
  detached: boolean;
  log?: (line: string) => void;
  /** Fixed API server port; ephemeral when absent. */
  apiserverPort?: number;
  /** Appended to kube-apiserver's flags (fault tests: e.g. --watch-cache=false). */
  extraApiserverArgs?: string[];
  /**
   * The certificates to use; generated when absent. Given, a client can hold a working
   * kubeconfig (writeKubeconfig) before the control plane exists (fault tests).
   */
  pki?: Pki;
}

const statePath = (dir: string): string => join(dir, 'state.json');

export function readState(dir: string): ControlPlaneState | undefined {
  try {
    return JSON.parse(readFileSync(statePath(dir), 'utf8')) as ControlPlaneState;
  } catch {
    return undefined;
  }
}

/** True when pid is alive and its command line names our folder (not a reused pid). */
function ownsProcess(pid: number, dir: string): boolean {
  if (!isAlive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
  } catch {
    return true; // no /proc: trust the pid
  }
}

export function isRunning(state: ControlPlaneState): boolean {
  return Object.values(state.pids).every((pid) => ownsProcess(pid, state.dir));
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

export function writeKubeconfig(path: string, server: string, pki: Pki): void {
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  writeFileSync(
    path,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: echoperator-local',
      '  cluster:',
      `    server: ${server}`,
      `    certificate-authority-data: ${b64(pki.caCert)}`,
      'users:',
      '- name: admin',
      '  user:',
      `    client-certificate-data: ${b64(pki.adminCert)}`,
      `    client-key-data: ${b64(pki.adminKey)}`,
      'contexts:',
      '- name: echoperator-local',
      '  context:',
      '    cluster: echoperator-local',
      '    user: admin',
      '    namespace: default',
      'current-context: echoperator-local',
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
}

interface Launched {
  pid: number;
  exited: () => { code: number | null; signal: string | null } | undefined;
  logPath: string;
}

function launch(name: string, bin: string, args: string[], dir: string, detached: boolean): Launched {
  const logPath = join(dir, 'logs', `${name}.log`);
  const fd = openSync(logPath, 'a');
  const child = spawn(bin, args, { detached, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  let exit: { code: number | null; signal: string | null } | undefined;
  child.on('exit', (code, signal) => (exit = { code, signal }));
  child.on('error', () => (exit = { code: -1, signal: null }));
  if (detached) child.unref();
  if (child.pid === undefined) throw new ControlPlaneError(`Could not start ${name} (${bin}).`);
  return { pid: child.pid, exited: () => exit, logPath };
}

function logTail(path: string, lines = 15): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n  ');
  } catch {
    return '(no log)';
  }
}

class PortInUse extends Error {}

function earlyExitError(name: string, proc: Launched, port: number): Error {
  const tail = logTail(proc.logPath);
  if (/address already in use/i.test(tail)) {
    return new PortInUse(`${name} could not bind 127.0.0.1:${port}: address already in use`);
  }
  const exit = proc.exited();
  return new ControlPlaneError(
    `${name} exited during start (code ${exit?.code ?? '?'}${exit?.signal ? `, signal ${exit.signal}` : ''}).`,
    `Last lines of ${proc.logPath}:\n  ${tail}`,
  );
}

async function waitFor(
  what: string,
  proc: Launched,
  port: number,
  probe: () => Promise<boolean>,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (proc.exited()) throw earlyExitError(what, proc, port);
    if (await probe().catch(() => false)) return;
    if (Date.now() > deadline) {
      throw new ControlPlaneError(
        `${what} was not ready after ${formatDuration(timeoutMs)}.`,
        `Last lines of ${proc.logPath}:\n  ${logTail(proc.logPath)}`,
      );
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

function httpOk(url: string, tls: { ca?: string; cert?: string; key?: string } = {}): Promise<boolean> {
  return new Promise((resolve) => {
    const send = url.startsWith('https:') ? httpsRequest : httpRequest;
    const req = send(url, { ...tls, timeout: 2000 }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/** Starts a control plane in opts.dir (which must not hold a running one) and records its state. */
export async function startControlPlane(opts: StartOptions): Promise<ControlPlaneState> {
  const log = opts.log ?? ((l: string) => console.error(l));
  const binaries = await ensureBinaries(log);
  for (let attempt = 1; ; attempt++) {
    try {
      return await startOnce(opts, binaries, log);
    } catch (err) {
      // Ephemeral ports can be taken between probing and binding: try fresh ones.
      if (err instanceof PortInUse && opts.apiserverPort === undefined && attempt < 3) continue;
      if (err instanceof PortInUse) throw new ControlPlaneError(err.message, 'Choose another port, or stop what is using it.');
      throw err;
    }
  }
}

async function startOnce(opts: StartOptions, bin: ControlPlaneBinaries, log: (l: string) => void): Promise<ControlPlaneState> {
  const { dir, detached } = opts;
  const started = Date.now();
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(join(dir, 'logs'), { recursive: true });
  mkdirSync(join(dir, 'pki'), { recursive: true });
  const pki = opts.pki ?? generatePki();
  const pkiFile = (name: string, content: string): string => {
    const p = join(dir, 'pki', name);
    writeFileSync(p, content, { mode: 0o600 });
    return p;
  };
  const files = {
    ca: pkiFile('ca.crt', pki.caCert),
    servingCert: pkiFile('apiserver.crt', pki.servingCert),
    servingKey: pkiFile('apiserver.key', pki.servingKey),
    saKey: pkiFile('sa.key', pki.serviceAccountKey),
    saPub: pkiFile('sa.pub', pki.serviceAccountPub),
  };
  const auditPolicy = join(dir, 'audit-policy.yaml');
  writeFileSync(auditPolicy, AUDIT_POLICY);
  const ports = {
    etcd: await freePort(),
    etcdPeer: await freePort(),
    apiserver: opts.apiserverPort ?? (await freePort()),
  };
  const launched: Launched[] = [];
  try {
    const etcdUrl = `http://127.0.0.1:${ports.etcd}`;
    const etcd = launch(
      'etcd',
      bin.etcd,
      [
        `--name=echoperator-local`,
        `--data-dir=${join(dir, 'etcd')}`,
        `--listen-client-urls=${etcdUrl}`,
        `--advertise-client-urls=${etcdUrl}`,
        `--listen-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
        `--initial-advertise-peer-urls=http://127.0.0.1:${ports.etcdPeer}`,
        `--initial-cluster=echoperator-local=http://127.0.0.1:${ports.etcdPeer}`,
        '--unsafe-no-fsync=true',
        '--quota-backend-bytes=8589934592',
        '--log-level=warn',
      ],
      dir,
      detached,
    );
    launched.push(etcd);
    await waitFor('etcd', etcd, ports.etcd, () => httpOk(`${etcdUrl}/health`), 30_000);

    const server = `https://127.0.0.1:${ports.apiserver}`;
    const apiserverArgs = [
      `--etcd-servers=${etcdUrl}`,
      `--cert-dir=${join(dir, 'pki')}`,
      `--tls-cert-file=${files.servingCert}`,
      `--tls-private-key-file=${files.servingKey}`,
      `--client-ca-file=${files.ca}`,
      `--secure-port=${ports.apiserver}`,
      '--bind-address=127.0.0.1',
      '--advertise-address=127.0.0.1',
      '--endpoint-reconciler-type=none',
      '--service-cluster-ip-range=10.0.0.0/24',
      '--allow-privileged=true',
      '--disable-admission-plugins=ServiceAccount',
      // On by default in OpenShift: blockOwnerDeletion needs update on the owner's finalizers.
      '--enable-admission-plugins=OwnerReferencesPermissionEnforcement',
      '--authorization-mode=RBAC',
      `--service-account-issuer=${server}/`,
      `--service-account-key-file=${files.saPub}`,
      `--service-account-signing-key-file=${files.saKey}`,
      `--audit-policy-file=${auditPolicy}`,
      `--audit-log-path=${join(dir, 'logs', 'audit.log')}`,
      '--audit-log-format=json',
      '--audit-log-maxsize=100',
      '--audit-log-maxbackup=1',
      '--v=1',
      ...(opts.extraApiserverArgs ?? []),
    ];
    const apiserver = launch('kube-apiserver', bin.kubeApiserver, apiserverArgs, dir, detached);
    launched.push(apiserver);
    const tls = { ca: pki.caCert, cert: pki.adminCert, key: pki.adminKey };
    await waitFor('kube-apiserver', apiserver, ports.apiserver, () => httpOk(`${server}/readyz`, tls), 120_000);

    const kubeconfig = join(dir, 'admin.kubeconfig');
    writeKubeconfig(kubeconfig, server, pki);
    const kcm = launch(
      'kube-controller-manager',
      bin.kubeControllerManager,
      [
        `--kubeconfig=${kubeconfig}`,
        '--leader-elect=false',
        '--secure-port=0',
        `--controllers=${CONTROLLERS.join(',')}`,
        `--service-account-private-key-file=${files.saKey}`,
        `--root-ca-file=${files.ca}`,
        '--v=1',
      ],
      dir,
      detached,
    );
    launched.push(kcm);
    // No health port (secure-port=0): give it a moment to fail on bad flags before declaring success.
    await new Promise((r) => setTimeout(r, 500));
    if (kcm.exited()) throw earlyExitError('kube-controller-manager', kcm, 0);

    const state: ControlPlaneState = {
      dir,
      kubeconfig,
      server,
      kubernetesVersion: KUBERNETES_VERSION,
      ports,
      pids: { etcd: etcd.pid, kubeApiserver: apiserver.pid, kubeControllerManager: kcm.pid },
      startedAt: new Date().toISOString(),
      apiserver: { bin: bin.kubeApiserver, args: apiserverArgs, detached },
    };
    writeFileSync(statePath(dir), JSON.stringify(state, null, 2) + '\n');
    log(`control plane: ready at ${server} in ${formatDuration(Date.now() - started)}`);
    return state;
  } catch (err) {
    for (const proc of launched.reverse()) await terminate(proc.pid, dir);
    throw err;
  }
}

async function terminate(pid: number, dir: string, graceMs = 10_000): Promise<void> {
  if (!ownsProcess(pid, dir)) return;
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return;
  }
  const deadline = Date.now() + graceMs;
  while (isAlive(pid) && !isZombie(pid) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  if (isAlive(pid) && !isZombie(pid)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      /* gone meanwhile */
    }
  }
}

/** An exited child not yet reaped by its parent: dead for our purposes. */
function isZombie(pid: number): boolean {
  try {
    return /\)\s+Z\s/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

/** Stops the processes recorded in state (controller-manager first, etcd last) and removes the folder. */
export async function stopControlPlane(state: ControlPlaneState): Promise<void> {
  const { etcd, kubeApiserver, kubeControllerManager } = state.pids;
  for (const pid of [kubeControllerManager, kubeApiserver, etcd]) await terminate(pid, state.dir);
  if (existsSync(state.dir)) rmSync(state.dir, { recursive: true, force: true });
}

/** The admin client certificate and key, from the kubeconfig startControlPlane wrote. */
function adminTls(state: ControlPlaneState): { ca: string; cert: string; key: string } {
  const kubeconfig = readFileSync(state.kubeconfig, 'utf8');
  const field = (name: string): string => {
    const m = new RegExp(`${name}: (\\S+)`).exec(kubeconfig);
    if (!m) throw new ControlPlaneError(`${state.kubeconfig} has no ${name}.`);
    return Buffer.from(m[1]!, 'base64').toString('utf8');
  };
  return { ca: field('certificate-authority-data'), cert: field('client-certificate-data'), key: field('client-key-data') };
}

/**
 * Kills only kube-apiserver (SIGKILL by default: a crash, no graceful close of watches) and waits
 * until it is gone; etcd and kube-controller-manager keep running. For fault tests.
 */
export async function killApiserver(state: ControlPlaneState, signal: NodeJS.Signals = 'SIGKILL'): Promise<void> {
  const pid = state.pids.kubeApiserver;
  if (!ownsProcess(pid, state.dir)) return;
  try {
    process.kill(pid, signal);
  } catch {
    return;
  }
  const deadline = Date.now() + 30_000;
  while (isAlive(pid) && !isZombie(pid)) {
    if (Date.now() > deadline) throw new ControlPlaneError(`kube-apiserver (pid ${pid}) did not exit after ${signal}.`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/**
 * Starts kube-apiserver again with the flags it was first started with (same port, etcd and
 * certificates, so clients need no new kubeconfig), after stopping it if it still runs; waits
 * until it is ready and records the new pid in state and state.json. For fault tests.
 */
export async function restartApiserver(state: ControlPlaneState, opts: { log?: (line: string) => void } = {}): Promise<void> {
  const launchSpec = state.apiserver;
  if (!launchSpec) throw new ControlPlaneError(`${statePath(state.dir)} does not record how kube-apiserver was started.`);
  await killApiserver(state, 'SIGTERM');
  const started = Date.now();
  const apiserver = launch('kube-apiserver', launchSpec.bin, launchSpec.args, state.dir, launchSpec.detached);
  state.pids.kubeApiserver = apiserver.pid;
  writeFileSync(statePath(state.dir), JSON.stringify(state, null, 2) + '\n');
  await waitFor('kube-apiserver', apiserver, state.ports.apiserver, () => httpOk(`${state.server}/readyz`, adminTls(state)), 120_000);
  (opts.log ?? ((l: string) => console.error(l)))(`control plane: kube-apiserver restarted at ${state.server} in ${formatDuration(Date.now() - started)}`);
}
