/**
 * A real node for the local cluster: kube-scheduler, and in a network namespace of the cluster's
 * own, containerd (with runc and the CNI bridge), the kubelet and kube-proxy. Pods run for real;
 * `kubectl logs` and `kubectl exec` reach the kubelet with client certificates.
 *
 * Why a network namespace: kube-proxy's and the kubelet's iptables chains have fixed names, the
 * bridge, ip_forward and the kubelet's ports are per network stack; inside a namespace of its own
 * each cluster has all of them to itself, and deleting the namespace removes them all at once.
 *
 * The API server listens on the host's loopback only. Two pairs of socat forwarders, joined by
 * Unix sockets in the cluster folder (which both namespaces see), carry TCP across:
 *   node/pods -> NODE_IP:<apiserver port> (node ns) -> apiserver.sock -> 127.0.0.1:<port> (host)
 *   apiserver -> 127.0.0.1:<kubelet port> (host) -> kubelet.sock -> 127.0.0.1:<kubelet port> (node ns)
 * so no address outside the loopback is ever used on the host.
 *
 * Teardown undoes everything: processes (found by the folder in their command line), containers
 * (through containerd, else by their cgroups), mounts under the folder, the cgroups under the
 * kubelet's cgroup root, the namespace (and with it the bridge, veths, chains and sysctls), and
 * the kubelet's links in /var/log/containers. leftovers() lists whatever would remain.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { ensureNodeBinaries } from '../assets.js';
import { isAlive } from '../../../ship/gobuild.js';
import { ControlPlaneError, formatDuration } from '../../../ship/errors.js';
import { NODE_IP, NODE_NAME } from '../network.js';
import { httpJson, launch, processesMentioning, terminate, waitFor, type Launched } from '../process.js';
import { containerdConfig, cniConflist, kubeletConfig, kubeProxyConfig, type NodeLayout } from './configs.js';
import { ensureHostReady } from './host.js';
import { buildImage, busyboxImageSpec, failingImageSpec, importImages, pauseImageSpec, PAUSE_IMAGE } from '../../../ship/image/images.js';

export interface NodeState {
  netns: string;
  cgroupRoot: string;
  kubeletPort: number;
  containerdSocket: string;
  pids: Record<string, number>;
}

export interface NodeStartOptions {
  dir: string;
  detached: boolean;
  apiserverPort: number;
  kubeletPort: number;
  /** Writes a kubeconfig for one of the node's identities, for the given server URL. */
  kubeconfig: (name: string, server: string, identity: 'kubelet' | 'kubeProxy' | 'kubeScheduler') => string;
  clientCaFile: string;
  /** The admin's TLS identity, to watch the node become Ready. */
  adminTls: { ca: string; cert: string; key: string };
  log: (line: string) => void;
}

/** The node's folder layout and names, all derived from the cluster folder. */
export function nodeLayout(clusterDir: string): NodeLayout {
  const dir = join(clusterDir, 'node');
  const id = createHash('sha256').update(clusterDir).digest('hex').slice(0, 10);
  return {
    dir,
    containerdConfig: join(dir, 'containerd.toml'),
    containerdRoot: join(dir, 'containerd', 'root'),
    containerdState: join(dir, 'containerd', 'state'),
    containerdSocket: join(dir, 'containerd.sock'),
    containerdHostsDir: join(dir, 'containerd', 'hosts'),
    runcRoot: join(dir, 'runc'),
    cniConfDir: join(dir, 'cni', 'net.d'),
    cniIpamDir: join(dir, 'cni', 'ipam'),
    kubeletRoot: join(dir, 'kubelet'),
    kubeletConfig: join(dir, 'kubelet.yaml'),
    kubeletCertDir: join(dir, 'kubelet', 'pki'),
    podLogsDir: join(dir, 'pod-logs'),
    kubeProxyConfig: join(dir, 'kube-proxy.yaml'),
    apiserverSocket: join(dir, 'apiserver.sock'),
    kubeletSocket: join(dir, 'kubelet.sock'),
    netns: `echoperator-${id}`,
    cgroupRoot: `/echoperator-${id}`,
  };
}

function run(command: string, args: string[], what: string): string {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  if (r.status !== 0)
    throw new ControlPlaneError(`${what} failed: ${command} ${args.join(' ')}: ${(r.stderr || r.error?.message || '').trim()}`);
  return r.stdout;
}

const netnsPath = (name: string): string => `/run/netns/${name}`;
const netnsExists = (name: string): boolean => existsSync(netnsPath(name));
/** Runs a command in the node's network namespace only (nsenter keeps the host's mounts, which the kubelet and containerd must share). */
const inNetns = (l: NodeLayout, bin: string, args: string[]): [string, string[]] => [
  'nsenter',
  [`--net=${netnsPath(l.netns)}`, bin, ...args],
];

function createNetns(l: NodeLayout): void {
  if (netnsExists(l.netns)) run('ip', ['netns', 'delete', l.netns], 'Removing a stale node network namespace');
  run('ip', ['netns', 'add', l.netns], 'Creating the node network namespace');
  run('ip', ['-n', l.netns, 'link', 'set', 'lo', 'up'], 'Bringing up the node loopback');
  run('ip', ['-n', l.netns, 'addr', 'add', `${NODE_IP}/32`, 'dev', 'lo'], 'Adding the node address');
  // Per namespace: the host's own setting is not touched.
  run('ip', ['netns', 'exec', l.netns, 'sysctl', '-q', '-w', 'net.ipv4.ip_forward=1'], 'Enabling forwarding in the node namespace');
}

async function waitForSocket(what: string, proc: Launched, check: () => boolean, timeoutMs: number): Promise<void> {
  await waitFor(what, proc, 0, async () => check(), timeoutMs);
}

function ctr(l: NodeLayout, args: string[]): { ok: boolean; out: string } {
  const r = spawnSync('ctr', ['--address', l.containerdSocket, '--namespace', 'k8s.io', ...args], { encoding: 'utf8', timeout: 30_000 });
  return { ok: r.status === 0, out: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}

interface NodeObject {
  status?: { conditions?: Array<{ type: string; status: string }> };
}

/** Starts the node; on failure, stops whatever of it was started. */
export async function startNode(opts: NodeStartOptions): Promise<NodeState> {
  const { dir, detached, log } = opts;
  const started = Date.now();
  ensureHostReady(log);
  const bin = await ensureNodeBinaries(log);
  const l = nodeLayout(dir);
  for (const d of [
    l.dir,
    l.cniConfDir,
    l.cniIpamDir,
    l.kubeletRoot,
    l.podLogsDir,
    l.containerdRoot,
    l.containerdState,
    l.containerdHostsDir,
  ])
    mkdirSync(d, { recursive: true });
  const state: NodeState = {
    netns: l.netns,
    cgroupRoot: l.cgroupRoot,
    kubeletPort: opts.kubeletPort,
    containerdSocket: l.containerdSocket,
    pids: {},
  };
  const start = (name: string, command: string, args: string[]): Launched => {
    const proc = launch(name, command, args, dir, detached);
    state.pids[name] = proc.pid;
    return proc;
  };
  try {
    createNetns(l);
    const apiPort = String(opts.apiserverPort);
    const kubeletPort = String(opts.kubeletPort);
    start('forward-apiserver-host', 'socat', [`UNIX-LISTEN:${l.apiserverSocket},fork,unlink-early`, `TCP:127.0.0.1:${apiPort}`]);
    start(
      'forward-apiserver-node',
      ...inNetns(l, 'socat', [`TCP-LISTEN:${apiPort},bind=${NODE_IP},fork,reuseaddr`, `UNIX-CONNECT:${l.apiserverSocket}`]),
    );
    start(
      'forward-kubelet-node',
      ...inNetns(l, 'socat', [`UNIX-LISTEN:${l.kubeletSocket},fork,unlink-early`, `TCP:127.0.0.1:${kubeletPort}`]),
    );
    start('forward-kubelet-host', 'socat', [`TCP-LISTEN:${kubeletPort},bind=127.0.0.1,fork,reuseaddr`, `UNIX-CONNECT:${l.kubeletSocket}`]);

    writeFileSync(join(l.cniConfDir, '10-echoperator.conflist'), cniConflist(l));
    writeFileSync(l.containerdConfig, containerdConfig(l, PAUSE_IMAGE));
    const containerd = start('containerd', ...inNetns(l, 'containerd', ['--config', l.containerdConfig, '--log-level', 'warn']));
    await waitForSocket('containerd', containerd, () => existsSync(l.containerdSocket) && ctr(l, ['version']).ok, 30_000);
    importImages(l.containerdSocket, [
      buildImage(bin.mkimage, pauseImageSpec(bin.pause)),
      buildImage(bin.mkimage, busyboxImageSpec()),
      buildImage(bin.mkimage, failingImageSpec()),
    ]);

    const nodeServer = `https://${NODE_IP}:${apiPort}`;
    start('kube-scheduler', bin.kubeScheduler, [
      `--kubeconfig=${opts.kubeconfig('kube-scheduler', `https://127.0.0.1:${apiPort}`, 'kubeScheduler')}`,
      '--leader-elect=false',
      '--secure-port=0',
      '--v=1',
    ]);
    createCgroupRoot(l);
    writeFileSync(l.kubeletConfig, kubeletConfig(l, { port: opts.kubeletPort, clientCaFile: opts.clientCaFile }));
    const kubelet = start(
      'kubelet',
      ...inNetns(l, bin.kubelet, [
        `--config=${l.kubeletConfig}`,
        `--kubeconfig=${opts.kubeconfig('kubelet', nodeServer, 'kubelet')}`,
        `--root-dir=${l.kubeletRoot}`,
        `--cert-dir=${l.kubeletCertDir}`,
        `--hostname-override=${NODE_NAME}`,
        `--node-ip=${NODE_IP}`,
        '--v=1',
      ]),
    );
    writeFileSync(l.kubeProxyConfig, kubeProxyConfig(opts.kubeconfig('kube-proxy', nodeServer, 'kubeProxy')));
    start('kube-proxy', ...inNetns(l, bin.kubeProxy, [`--config=${l.kubeProxyConfig}`, '--v=1']));

    const nodeUrl = `https://127.0.0.1:${apiPort}/api/v1/nodes/${NODE_NAME}`;
    await waitFor(
      'the node (kubelet)',
      kubelet,
      0,
      async () =>
        (await httpJson<NodeObject>(nodeUrl, opts.adminTls))?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ??
        false,
      120_000,
    );
    log(`node: ${NODE_NAME} Ready in ${formatDuration(Date.now() - started)} (network namespace ${l.netns})`);
    return state;
  } catch (err) {
    await stopNode(dir, state);
    throw err;
  }
}

/** Order matters: the kubelet first (it would restart containers), containers before containerd, forwarders last. */
const STOP_ORDER = [
  'kube-scheduler',
  'kubelet',
  'kube-proxy',
  'containerd',
  'forward-kubelet-host',
  'forward-kubelet-node',
  'forward-apiserver-node',
  'forward-apiserver-host',
];

/** Stops the node and removes all it made; safe to call on a half-started or already stopped node. */
export async function stopNode(clusterDir: string, state: NodeState | undefined): Promise<void> {
  const l = nodeLayout(clusterDir);
  const pids = state?.pids ?? {};
  const sandboxes = sandboxIds(l);
  for (const name of STOP_ORDER) {
    if (name === 'containerd' && pids.containerd && isAlive(pids.containerd)) removeContainers(l);
    if (pids[name]) await terminate(pids[name], clusterDir);
  }
  // Shims and container processes outlive containerd; anything still naming our folder goes too.
  killCgroupProcesses(l);
  for (const pid of processesMentioning(l.dir)) await terminate(pid, l.dir, 2_000);
  unmountUnder(l.dir);
  removeCgroups(l);
  if (netnsExists(l.netns)) run('ip', ['netns', 'delete', l.netns], 'Removing the node network namespace');
  removeFilesOutside(l, sandboxes);
}

/** Kills and deletes every container through containerd (sandboxes included). */
function removeContainers(l: NodeLayout): void {
  const tasks = ctr(l, ['tasks', 'ls', '-q']).out.split('\n').filter(Boolean);
  for (const id of tasks) ctr(l, ['tasks', 'kill', '--signal', 'SIGKILL', '--all', id]);
  for (const id of tasks) ctr(l, ['tasks', 'delete', '--force', id]);
  for (const id of ctr(l, ['containers', 'ls', '-q']).out.split('\n').filter(Boolean)) ctr(l, ['containers', 'delete', id]);
}

/**
 * The kubelet requires its cgroup root to exist in every hierarchy. A new cpuset cgroup starts
 * with no CPUs and no memory nodes: give it its parent's.
 */
function createCgroupRoot(l: NodeLayout): void {
  const base = '/sys/fs/cgroup';
  const unified = existsSync(join(base, 'cgroup.controllers'));
  const hierarchies = unified
    ? [base]
    : readdirSync(base)
        .filter((h) => h !== 'unified')
        .map((h) => join(base, h));
  for (const h of hierarchies) {
    const d = join(h, l.cgroupRoot);
    mkdirSync(d, { recursive: true });
    if (!unified && h.endsWith('/cpuset')) {
      for (const f of ['cpuset.cpus', 'cpuset.mems']) writeFileSync(join(d, f), readFileSync(join(h, f), 'utf8'));
    }
  }
}

/** cgroup v1 hierarchies (and the unified one, where mounted) that hold our cgroup root. */
function cgroupDirs(l: NodeLayout): string[] {
  const base = '/sys/fs/cgroup';
  if (!existsSync(base)) return [];
  const candidates = existsSync(join(base, 'cgroup.controllers')) ? [base] : readdirSync(base).map((h) => join(base, h));
  return candidates.map((h) => join(h, l.cgroupRoot)).filter((d) => existsSync(d));
}

function walkDirs(root: string): string[] {
  const out: string[] = [];
  const visit = (d: string): void => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      try {
        if (statSync(p).isDirectory()) visit(p);
      } catch {
        /* removed meanwhile */
      }
    }
    out.push(d);
  };
  visit(root);
  return out; // children before parents
}

function killCgroupProcesses(l: NodeLayout): void {
  for (const root of cgroupDirs(l)) {
    for (const d of walkDirs(root)) {
      let procs: string[] = [];
      try {
        procs = readFileSync(join(d, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean);
      } catch {
        continue;
      }
      for (const pid of procs) {
        try {
          process.kill(Number(pid), 'SIGKILL');
        } catch {
          /* gone */
        }
      }
    }
  }
}

function removeCgroups(l: NodeLayout): void {
  const deadline = Date.now() + 10_000;
  for (const root of cgroupDirs(l)) {
    for (const d of walkDirs(root)) {
      for (;;) {
        try {
          rmdirSync(d);
          break;
        } catch (err) {
          // EBUSY while killed processes are still exiting.
          if ((err as NodeJS.ErrnoException).code !== 'EBUSY' || Date.now() > deadline) break;
          spawnSync('sleep', ['0.1']);
        }
      }
    }
  }
}

/** Mount points under dir, deepest first (from this process's mount table, which is the host's). */
function mountsUnder(dir: string): string[] {
  let table = '';
  try {
    table = readFileSync('/proc/self/mountinfo', 'utf8');
  } catch {
    return [];
  }
  const decode = (s: string): string => s.replace(/\\(\d{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
  return table
    .split('\n')
    .map((line) => decode(line.split(' ')[4] ?? ''))
    .filter((p) => p.startsWith(`${dir}/`))
    .sort((a, b) => b.length - a.length);
}

function unmountUnder(dir: string): void {
  for (const mount of mountsUnder(dir)) {
    if (spawnSync('umount', [mount]).status !== 0) spawnSync('umount', ['-l', mount]);
  }
}

/**
 * Fixed paths outside the cluster folder that the node's components write to whatever their
 * configuration says: the kubelet's container log links and device-plugin folder, libcni's result
 * cache, containerd shims' socket folder, and ip's namespace folder.
 */
export const FIXED_PATHS = [
  '/var/log/containers',
  '/var/lib/kubelet/device-plugins',
  '/var/lib/kubelet',
  '/var/lib/cni/results',
  '/var/lib/cni',
  '/run/containerd/s',
  '/run/containerd',
  '/run/netns',
];
const CONTAINER_LOG_LINKS = '/var/log/containers';
const CNI_RESULTS = '/var/lib/cni/results';

function listDir(dir: string): string[] {
  try {
    return readdirSync(dir).map((name) => join(dir, name));
  } catch {
    return [];
  }
}

/**
 * The pod sandboxes containerd's CRI plugin made (their folders in its root and state), and the
 * tasks its runtime ran (their bundles in its state): the ids a shim may have been started for.
 */
function sandboxIds(l: NodeLayout): string[] {
  const ids = [
    ...[l.containerdRoot, l.containerdState].flatMap((d) => listDir(join(d, 'io.containerd.grpc.v1.cri', 'sandboxes'))),
    ...listDir(join(l.containerdState, 'io.containerd.runtime.v2.task', CONTAINERD_NAMESPACE)),
  ];
  return [...new Set(ids.map((p) => p.slice(p.lastIndexOf('/') + 1)))];
}

const CONTAINERD_NAMESPACE = 'k8s.io';
const SHIM_SOCKETS = '/run/containerd/s';

/**
 * The socket a shim for `id` listens on: containerd 1.6 names it by the hash of its own address,
 * the namespace and the id (runtime/v2/shim SocketAddress), in a folder no setting moves. A shim
 * that is killed, not asked to exit, leaves it behind.
 */
function shimSocket(l: NodeLayout, id: string): string {
  return join(
    SHIM_SOCKETS,
    createHash('sha256')
      .update(join(l.containerdSocket, CONTAINERD_NAMESPACE, id))
      .digest('hex'),
  );
}

/**
 * Our files in the fixed paths: log links into our folder, libcni's cached results of our network
 * and of the CRI plugin's loopback setup for our sandboxes (no CNI DEL runs when the node is torn
 * down by killing its containers), and the sockets of our killed shims.
 */
function ourFilesOutside(l: NodeLayout, sandboxes: string[] = []): string[] {
  const links = listDir(CONTAINER_LOG_LINKS).filter((p) => {
    try {
      return readlinkSync(p).startsWith(`${l.podLogsDir}/`);
    } catch {
      return false;
    }
  });
  const ours = new Set(sandboxes.map((id) => join(CNI_RESULTS, `cni-loopback-${id}-lo`)));
  const results = listDir(CNI_RESULTS).filter((p) => p.startsWith(join(CNI_RESULTS, `${l.netns}-`)) || ours.has(p));
  const sockets = sandboxes.map((id) => shimSocket(l, id)).filter((p) => existsSync(p));
  return [...links, ...results, ...sockets];
}

/**
 * What every kubelet writes to its fixed device-plugin folder, whatever its root dir: the
 * device-plugin registration socket (left behind on exit) and its checkpoint. Shared by every
 * kubelet on the machine, so removed only once none is left.
 */
const DEVICE_PLUGIN_FILES = ['/var/lib/kubelet/device-plugins/kubelet.sock', '/var/lib/kubelet/device-plugins/kubelet_internal_checkpoint'];

/** Removes our files there, then each fixed folder that is left empty (another cluster's stay). */
function removeFilesOutside(l: NodeLayout, sandboxes: string[]): void {
  for (const p of ourFilesOutside(l, sandboxes)) unlinkSync(p);
  if (processesMentioning('kubelet.yaml').length === 0) for (const p of DEVICE_PLUGIN_FILES) rmSync(p, { force: true });
  for (const dir of FIXED_PATHS) {
    // `ip netns add` bind-mounts /run/netns onto itself (to share namespace mounts): unmount it once empty.
    if (dir === '/run/netns' && existsSync(dir) && listDir(dir).length === 0) spawnSync('umount', [dir]);
    try {
      rmdirSync(dir);
    } catch {
      /* absent, or still used */
    }
  }
}

/** Everything of the node that is still on the machine: empty once stopNode has run. */
export function nodeLeftovers(clusterDir: string): string[] {
  const l = nodeLayout(clusterDir);
  const found: string[] = [];
  for (const pid of processesMentioning(l.dir))
    found.push(`process ${pid}: ${readFileSafe(`/proc/${pid}/cmdline`).replace(/\0/g, ' ').trim()}`);
  for (const m of mountsUnder(clusterDir)) found.push(`mount ${m}`);
  for (const c of cgroupDirs(l)) found.push(`cgroup ${c}`);
  if (netnsExists(l.netns)) found.push(`network namespace ${l.netns} (its interfaces, iptables chains and sysctls)`);
  for (const p of ourFilesOutside(l, sandboxIds(l))) found.push(`file ${p}`);
  return found;
}

/**
 * What any cluster's node left on the machine: run when no cluster should be running (after the
 * tests and `cluster:down`). Namespaces, cgroups and processes of every echoperator node, and the
 * fixed folders the node's components create.
 */
export function machineLeftovers(): string[] {
  const found: string[] = [];
  for (const ns of listDir('/run/netns')) if (/\/echoperator-[0-9a-f]+$/.test(ns)) found.push(`network namespace ${ns}`);
  for (const h of listDir('/sys/fs/cgroup')) for (const c of listDir(h)) if (/\/echoperator-[0-9a-f]+$/.test(c)) found.push(`cgroup ${c}`);
  for (const p of FIXED_PATHS) if (existsSync(p)) found.push(`folder ${p}`);
  for (const pid of [
    ...processesMentioning('kubelet.yaml'),
    ...processesMentioning('containerd.toml'),
    ...processesMentioning('kube-proxy.yaml'),
  ]) {
    found.push(`process ${pid}: ${readFileSafe(`/proc/${pid}/cmdline`).replace(/\0/g, ' ').trim()}`);
  }
  return found;
}

function readFileSafe(path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return '';
  }
}
