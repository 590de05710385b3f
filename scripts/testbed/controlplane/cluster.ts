/**
 * Starts and stops a local control plane: etcd, kube-apiserver (RBAC on, PodSecurity admission
 * built in) and kube-controller-manager, on loopback and ephemeral ports, all state in one folder.
 *
 * The folder holds state.json (pids, ports, kubeconfig), so `cluster:down` stops exactly the
 * processes it started: a pid is only signalled when its command line still names that folder,
 * which guards against a pid reused by an unrelated process.
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { stopAddons } from './addons.js';
import { ensureBinaries, kubernetesVersion, type ControlPlaneBinaries } from './assets.js';
import { isAlive } from '../../ship/gobuild.js';
import { ControlPlaneError, formatDuration } from '../../ship/errors.js';
import { NODE_IP, SERVICE_CIDR } from './network.js';
import { startNode, stopNode, type NodeState } from './node/node.js';
import { earlyExitError, httpOk, isZombie, launch, ownsProcess, PortInUse, terminate, waitFor, type Launched } from './process.js';
import { generatePki, type ClientIdentity, type Pki } from './pki.js';

/**
 * The controllers a real cluster runs for what the operator and its install use: GC for owner
 * references, Job/CronJob, Deployments, namespaces; ServiceAccounts and the root CA ConfigMap
 * that projected tokens need; node lifecycle (the not-ready taint); EndpointSlices for Services;
 * PodDisruptionBudgets for evictions; pod GC; ResourceQuota (a quota is enforced only once this
 * controller has written its status); ClusterRole aggregation, which fills the built-in `admin`,
 * `edit` and `view` roles (empty without it) from the ClusterRoles labelled to aggregate into them,
 * such as the install's tenant roles for Echos and ScheduledEchos.
 */
const CONTROLLERS = [
  'garbage-collector-controller',
  'job-controller',
  'cronjob-controller',
  'deployment-controller',
  'replicaset-controller',
  'namespace-controller',
  'ttl-after-finished-controller',
  'serviceaccount-controller',
  'root-ca-certificate-publisher-controller',
  'node-lifecycle-controller',
  'endpointslice-controller',
  'disruption-controller',
  'pod-garbage-collector-controller',
  'resourcequota-controller',
  'clusterrole-aggregation-controller',
];

/**
 * Admission plugins beyond the defaults: NodeRestriction (a kubelet may only touch its own Node
 * and pods); OwnerReferencesPermissionEnforcement (on by default in OpenShift: blockOwnerDeletion
 * needs update on the owner's finalizers, so the install's RBAC is tested against it); and
 * PodNodeSelector, which lets a namespace pin its pods to nodes: the tests that need no pod run
 * keep theirs off the node (test/support/kube.ts).
 */
const ADMISSION_PLUGINS = ['NodeRestriction', 'OwnerReferencesPermissionEnforcement', 'PodNodeSelector'];

/**
 * The audit log (logs/audit.log) records who wrote what: one JSON line (Metadata level: verb,
 * resource, namespace, name, User-Agent, response code; no bodies) per write to the resources the
 * operator touches. Reads and other resources (e.g. the job controller's Pods) are not logged,
 * so it stays small and cheap; the file is capped at 100 MB plus one rotated file. The benchmarks
 * count an operator's exact writes from it (scripts/lab/bench/apiwrites.ts). Two kinds of write carry
 * a body, which the fault campaign's judge needs (scripts/lab/faults/judge/invariants.ts): an Echo
 * write's answer (its uid, generation and message) and a Job create's request (its owner and
 * message), so every Job ever created is tied to the Echo generation it ran, deleted ones too.
 */
const AUDIT_POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: RequestResponse
  verbs: [create, update, patch]
  resources:
  - group: mmontes.io
    resources: [echos]
- level: Request
  verbs: [create]
  resources:
  - group: batch
    resources: [jobs]
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
  ports: { etcd: number; etcdPeer: number; apiserver: number; kubelet?: number };
  pids: { etcd: number; kubeApiserver: number; kubeControllerManager: number };
  /** The node, when the cluster has one. */
  node?: NodeState;
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
  /** Whether to run a node (kubelet, containerd, kube-proxy, kube-scheduler): see wantNode(). */
  node?: boolean;
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

/**
 * Whether a cluster started now gets a node: yes, unless ECHOPERATOR_NODE=false (a control plane
 * only, for benchmarks that create thousands of Jobs, or a machine where the node cannot run).
 */
export function wantNode(): boolean {
  const v = process.env.ECHOPERATOR_NODE;
  if (v === undefined || v === '' || v === 'true') return true;
  if (v === 'false') return false;
  throw new ControlPlaneError(`ECHOPERATOR_NODE must be true or false, got ${JSON.stringify(v)}.`);
}

export function isRunning(state: ControlPlaneState): boolean {
  const pids = [...Object.values(state.pids), ...Object.values(state.node?.pids ?? {})];
  return pids.every((pid) => ownsProcess(pid, state.dir));
}

/**
 * A port free on every address, drawn from below the kernel's ephemeral range: what it is given to
 * (the operator's metrics and health servers, the control plane) may listen on all of them, and a
 * port held on one other address (a test's forwarder on the machine's own IP) would refuse such a
 * listener. Below the ephemeral range, because outgoing connections take their local ports from
 * it: a port found free there can be taken by any connection before its owner listens (seen when
 * a fault campaign's proxies opened thousands of connections beside a test starting an operator).
 */
export async function freePort(): Promise<number> {
  const ephemeralStart = ephemeralPortRangeStart();
  const low = Math.min(20_000, ephemeralStart - 1000);
  for (let attempt = 0; attempt < 50; attempt++) {
    const port = low + Math.floor(Math.random() * (ephemeralStart - low));
    const free = await new Promise<boolean>((resolve) => {
      const server = createServer();
      server.once('error', () => resolve(false));
      server.listen(port, () => server.close(() => resolve(true)));
    });
    if (free) return port;
  }
  throw new Error(`no free port between ${low} and ${ephemeralStart} (below the ephemeral range)`);
}

function ephemeralPortRangeStart(): number {
  try {
    const first = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (first > 2000) return first;
  } catch {
    /* not Linux */
  }
  return 32768; // Linux's default
}

/** A kubeconfig for `client`: a client certificate (the admin's by default) or a bearer token. */
export function writeKubeconfig(
  path: string,
  server: string,
  pki: Pick<Pki, 'caCert'> & Partial<Pick<Pki, 'adminCert' | 'adminKey'>>,
  client: { cert: string; key: string } | { token: string } = { cert: pki.adminCert!, key: pki.adminKey! },
): void {
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  const credentials =
    'token' in client
      ? [`    token: ${client.token}`]
      : [`    client-certificate-data: ${b64(client.cert)}`, `    client-key-data: ${b64(client.key)}`];
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
      ...credentials,
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
  // A node that died with its cluster may have left mounts and a namespace behind: undo them first.
  if (existsSync(join(dir, 'node'))) await stopNode(dir, readState(dir)?.node);
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
    kubeletClientCert: pkiFile('apiserver-kubelet-client.crt', pki.clients.apiserverKubeletClient.cert),
    kubeletClientKey: pkiFile('apiserver-kubelet-client.key', pki.clients.apiserverKubeletClient.key),
  };
  const auditPolicy = join(dir, 'audit-policy.yaml');
  writeFileSync(auditPolicy, AUDIT_POLICY);
  const ports = {
    etcd: await freePort(),
    etcdPeer: await freePort(),
    apiserver: opts.apiserverPort ?? (await freePort()),
    ...(opts.node ? { kubelet: await freePort() } : {}),
  };
  let node: NodeState | undefined;
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
      // With a node, pods reach the API server through the `kubernetes` Service, whose endpoint
      // is the advertised address (a forwarder on the node's address, see node/node.ts). With
      // none, nothing needs the Service's endpoints, and 127.0.0.1 is not a valid one.
      ...(opts.node ? [`--advertise-address=${NODE_IP}`] : ['--advertise-address=127.0.0.1', '--endpoint-reconciler-type=none']),
      `--service-cluster-ip-range=${SERVICE_CIDR}`,
      '--allow-privileged=true',
      `--enable-admission-plugins=${ADMISSION_PLUGINS.join(',')}`,
      '--authorization-mode=Node,RBAC',
      `--kubelet-client-certificate=${files.kubeletClientCert}`,
      `--kubelet-client-key=${files.kubeletClientKey}`,
      '--kubelet-preferred-address-types=Hostname,InternalIP',
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

    if (opts.node) {
      const kubeconfigFor = (name: string, url: string, identity: ClientIdentity): string => {
        const path = join(dir, `${name}.kubeconfig`);
        writeKubeconfig(path, url, pki, pki.clients[identity]);
        return path;
      };
      node = await startNode({
        dir,
        detached,
        apiserverPort: ports.apiserver,
        kubeletPort: ports.kubelet!,
        kubeconfig: kubeconfigFor,
        clientCaFile: files.ca,
        adminTls: tls,
        log,
      });
    }

    const state: ControlPlaneState = {
      dir,
      kubeconfig,
      server,
      kubernetesVersion: kubernetesVersion(),
      ports,
      pids: { etcd: etcd.pid, kubeApiserver: apiserver.pid, kubeControllerManager: kcm.pid },
      ...(node ? { node } : {}),
      startedAt: new Date().toISOString(),
      apiserver: { bin: bin.kubeApiserver, args: apiserverArgs, detached },
    };
    writeFileSync(statePath(dir), JSON.stringify(state, null, 2) + '\n');
    log(`control plane: ready at ${server} in ${formatDuration(Date.now() - started)}`);
    return state;
  } catch (err) {
    if (opts.node) await stopNode(dir, node);
    for (const proc of launched.reverse()) await terminate(proc.pid, dir);
    throw err;
  }
}

/**
 * Stops the add-ons recorded in the folder (addons.ts: GitOps' Flux and git server), the node
 * (everything it made on the machine), then the processes recorded in state (controller-manager first, etcd last), and
 * removes the folder.
 */
export async function stopControlPlane(state: ControlPlaneState): Promise<void> {
  const { etcd, kubeApiserver, kubeControllerManager } = state.pids;
  await stopAddons(state.dir);
  await terminate(kubeControllerManager, state.dir);
  if (state.node || existsSync(join(state.dir, 'node'))) await stopNode(state.dir, state.node);
  for (const pid of [kubeApiserver, etcd]) await terminate(pid, state.dir);
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

/** How long restartApiserver waits for the kernel to release the port of a killed kube-apiserver. */
const PORT_RELEASE_WAIT_MS = 120_000;

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
  for (;;) {
    const apiserver = launch('kube-apiserver', launchSpec.bin, launchSpec.args, state.dir, launchSpec.detached);
    state.pids.kubeApiserver = apiserver.pid;
    writeFileSync(statePath(state.dir), JSON.stringify(state, null, 2) + '\n');
    try {
      await waitFor('kube-apiserver', apiserver, state.ports.apiserver, () => httpOk(`${state.server}/readyz`, adminTls(state)), 120_000);
      break;
    } catch (err) {
      // A killed server's connections can outlive it: one whose client stopped reading (a frozen
      // process, in the fault tests) lingers in FIN-WAIT with unsent data until the kernel gives
      // up on it, and holds the port meanwhile. Same port, so wait for the kernel.
      if (!(err instanceof PortInUse) || Date.now() - started > PORT_RELEASE_WAIT_MS) throw err;
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
  (opts.log ?? ((l: string) => console.error(l)))(
    `control plane: kube-apiserver restarted at ${state.server} in ${formatDuration(Date.now() - started)}`,
  );
}
