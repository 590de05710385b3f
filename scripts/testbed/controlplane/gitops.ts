/**
 * GitOps on the local cluster: Flux's source-controller and kustomize-controller, and a git
 * server holding the config repositories, all as processes on the host beside the control plane,
 * every address on loopback:
 *
 *   githttp 127.0.0.1:G (git http-backend)  <-- clone ------------- source-controller
 *   source-controller's artifact storage 127.0.0.1:S  <-- GET ---- kustomize-controller
 *   both controllers --> kube-apiserver, each as its own ServiceAccount (a bearer token)
 *
 * Nothing runs as a pod, so no image and no registry are needed; the controllers' CRDs come from
 * their Go modules (scripts/testbed/controlplane/assets.ts copies them beside the binaries).
 *
 * Identities: source-controller gets the ClusterRole its release generates (config/rbac/role.yaml:
 * its own kinds, Secrets to read credentials, Events). kustomize-controller is bound to
 * cluster-admin, as upstream Flux binds it: it applies whatever the repository holds (CRDs,
 * ClusterRoles, Namespaces), and the API server lets a client grant only permissions it holds.
 *
 * Everything lives in the cluster's folder (gitops/: state.json, the repositories, the artifact
 * storage, scratch space, kubeconfigs); its processes are recorded as an add-on (addons.ts), so
 * stopControlPlane() stops them with the cluster without importing this module; each
 * process runs from a link in that folder, so its command line names the folder and terminate()
 * never signals a reused pid.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { recordAddon, stopAddon } from './addons.js';
import { kubectlFor } from '../kubectl.js';
import { ensureFluxBinaries, ensureGitServer } from './assets.js';
import { freePort, writeKubeconfig, type ControlPlaneState } from './cluster.js';
import { ControlPlaneError, formatDuration } from '../../ship/errors.js';
import { httpOk, launch, logTail, ownsProcess, waitFor, type Launched } from './process.js';

/** Where the controllers run and their objects live, as in a Flux install. */
export const FLUX_NAMESPACE = 'flux-system';

export interface GitOpsState {
  /** <cluster folder>/gitops */
  dir: string;
  /** The git server's base URL: a repository NAME is at `${gitUrl}/NAME.git`. */
  gitUrl: string;
  /** source-controller's artifact server, as kustomize-controller reaches it. */
  storageUrl: string;
  pids: { githttp: number; sourceController: number; kustomizeController: number };
}

/** The add-on's name in the cluster folder's addons/. */
const ADDON = 'gitops';

const layout = (clusterDir: string) => {
  const dir = join(clusterDir, 'gitops');
  return {
    dir,
    state: join(dir, 'state.json'),
    repos: join(dir, 'repositories'),
    storage: join(dir, 'storage'),
    tmp: join(dir, 'tmp'),
    bin: join(dir, 'bin'),
  };
};

export function readGitOpsState(clusterDir: string): GitOpsState | undefined {
  try {
    return JSON.parse(readFileSync(layout(clusterDir).state, 'utf8')) as GitOpsState;
  } catch {
    return undefined;
  }
}

const kubectl = (kubeconfig: string, args: string[], input?: string): string => kubectlFor(kubeconfig).ok(args, { input });

/** The controllers' CRDs, served and Established. */
function installCrds(kubeconfig: string, crdDirs: string[]): void {
  for (const dir of crdDirs) kubectl(kubeconfig, ['apply', '--server-side', '--field-manager=echoperator-gitops', '-f', dir]);
  kubectl(kubeconfig, ['wait', '--for=condition=Established', '--timeout=60s', ...crdDirs.flatMap((d) => ['-f', d])]);
}

/** Namespace, ServiceAccounts and RBAC (see the module comment), then a token-bearing kubeconfig per controller. */
function installIdentities(cluster: ControlPlaneState, sourceRole: string, dir: string): { source: string; kustomize: string } {
  const role = parse(readFileSync(sourceRole, 'utf8')) as { rules: unknown[] };
  const sa = (name: string) => ({ kind: 'ServiceAccount', name, namespace: FLUX_NAMESPACE });
  const objects = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: FLUX_NAMESPACE } },
    ...['source-controller', 'kustomize-controller'].map((name) => ({
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name, namespace: FLUX_NAMESPACE },
    })),
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'flux-source-controller' }, rules: role.rules },
    ...[
      ['flux-source-controller', 'flux-source-controller', 'source-controller'],
      ['flux-kustomize-controller', 'cluster-admin', 'kustomize-controller'],
    ].map(([name, clusterRole, account]) => ({
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: clusterRole },
      subjects: [sa(account!)],
    })),
  ];
  kubectl(
    cluster.kubeconfig,
    ['apply', '--server-side', '--field-manager=echoperator-gitops', '-f', '-'],
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  );
  const caCert = readFileSync(join(cluster.dir, 'pki', 'ca.crt'), 'utf8');
  const kubeconfigFor = (account: string): string => {
    // As long as the cluster's certificates: the controllers must not lose access mid-run.
    const token = kubectl(cluster.kubeconfig, ['create', 'token', account, '-n', FLUX_NAMESPACE, '--duration=8760h']).trim();
    const path = join(dir, `${account}.kubeconfig`);
    writeKubeconfig(path, cluster.server, { caCert }, { token });
    return path;
  };
  return { source: kubeconfigFor('source-controller'), kustomize: kubeconfigFor('kustomize-controller') };
}

/** Records the processes as the cluster's add-on, in stop order: the controllers before the git server they read. */
function recordProcesses(clusterDir: string, state: GitOpsState): void {
  const { kustomizeController, sourceController, githttp } = state.pids;
  recordAddon(clusterDir, ADDON, [kustomizeController, sourceController, githttp]);
}

/** A link to `target` in the folder, so the process's command line names the cluster folder. */
function linked(binDir: string, target: string, name: string): string {
  const link = join(binDir, name);
  rmSync(link, { force: true }); // a link to an older pinned version's binary
  symlinkSync(target, link);
  return link;
}

async function waitForFile(path: string, proc: Launched, what: string, timeoutMs: number): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  while (!existsSync(path)) {
    if (proc.exited() || Date.now() > deadline) {
      throw new ControlPlaneError(`${what} did not start.`, `Last lines of ${proc.logPath}:\n  ${logTail(proc.logPath)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return readFileSync(path, 'utf8').trim();
}

/**
 * Starts the git server, installs Flux's CRDs and identities, and starts source-controller and
 * kustomize-controller against `cluster`, waiting until both are ready. Idempotent: a cluster
 * whose GitOps already runs gets its state back.
 */
export async function startGitOps(cluster: ControlPlaneState, opts: { log?: (line: string) => void } = {}): Promise<GitOpsState> {
  const log = opts.log ?? ((l: string) => console.error(l));
  const running = readGitOpsState(cluster.dir);
  if (running && Object.values(running.pids).every((pid) => ownsProcess(pid, cluster.dir))) {
    recordProcesses(cluster.dir, running); // a GitOps started by a version that kept no add-on record
    return running;
  }
  await stopGitOps(cluster.dir); // what is left of one that died
  const started = Date.now();
  const detached = cluster.apiserver?.detached ?? false;
  const flux = await ensureFluxBinaries(log);
  const githttpBin = await ensureGitServer(log);
  const l = layout(cluster.dir);
  for (const d of [l.dir, l.repos, l.storage, l.tmp, l.bin]) mkdirSync(d, { recursive: true });
  // Scratch space (clones, builds) inside the folder: nothing lingers in /tmp after a stop.
  const env = { RUNTIME_NAMESPACE: FLUX_NAMESPACE, TMPDIR: l.tmp };
  // Recorded as each process starts, so stopping the cluster stops it even if this start dies midway.
  const state: GitOpsState = { dir: l.dir, gitUrl: '', storageUrl: '', pids: { githttp: 0, sourceController: 0, kustomizeController: 0 } };
  const record = (key: keyof GitOpsState['pids'], proc: Launched): void => {
    state.pids[key] = proc.pid;
    writeFileSync(l.state, JSON.stringify(state, null, 2) + '\n');
    recordProcesses(cluster.dir, state);
  };
  try {
    const addressFile = join(l.dir, 'githttp.address');
    const githttp = launch(
      'githttp',
      linked(l.bin, githttpBin, 'githttp'),
      ['-root', l.repos, '-listen', '127.0.0.1:0', '-address-file', addressFile],
      cluster.dir,
      detached,
      env,
    );
    record('githttp', githttp);
    state.gitUrl = `http://${await waitForFile(addressFile, githttp, 'the git server (githttp)', 10_000)}`;

    const binDir = (bin: string): string => join(bin, '..');
    installCrds(cluster.kubeconfig, [join(binDir(flux.sourceController), 'crds'), join(binDir(flux.kustomizeController), 'crds')]);
    const kubeconfigs = installIdentities(cluster, join(binDir(flux.sourceController), 'role.yaml'), l.dir);

    const [storagePort, sourceHealth, kustomizeHealth] = [await freePort(), await freePort(), await freePort()];
    const storageAddress = `127.0.0.1:${storagePort}`;
    state.storageUrl = `http://${storageAddress}`;
    const common = ['--enable-leader-election=false', '--metrics-addr=0', '--log-level=info'];
    const source = launch(
      'source-controller',
      linked(l.bin, flux.sourceController, 'source-controller'),
      [
        ...common,
        `--health-addr=127.0.0.1:${sourceHealth}`,
        `--storage-path=${l.storage}`,
        `--storage-addr=${storageAddress}`,
        // The address artifacts' URLs carry: kustomize-controller runs on this host too.
        `--storage-adv-addr=${storageAddress}`,
      ],
      cluster.dir,
      detached,
      { ...env, KUBECONFIG: kubeconfigs.source },
    );
    record('sourceController', source);
    const kustomize = launch(
      'kustomize-controller',
      linked(l.bin, flux.kustomizeController, 'kustomize-controller'),
      [
        ...common,
        `--health-addr=127.0.0.1:${kustomizeHealth}`,
        // How soon a Kustomization waiting on a dependency looks again (30 s by default).
        '--requeue-dependency=5s',
      ],
      cluster.dir,
      detached,
      { ...env, KUBECONFIG: kubeconfigs.kustomize },
    );
    record('kustomizeController', kustomize);
    await waitFor('source-controller', source, sourceHealth, () => httpOk(`http://127.0.0.1:${sourceHealth}/readyz`), 60_000);
    await waitFor('kustomize-controller', kustomize, kustomizeHealth, () => httpOk(`http://127.0.0.1:${kustomizeHealth}/readyz`), 60_000);

    log(`gitops: Flux and the git server (${state.gitUrl}) ready in ${formatDuration(Date.now() - started)}`);
    return state;
  } catch (err) {
    await stopGitOps(cluster.dir);
    throw err;
  }
}

/** A new, empty bare repository on the git server (branch main); returns its URL. */
export function createRepository(state: GitOpsState, name: string): string {
  const path = join(state.dir, 'repositories', `${name}.git`);
  const r = spawnSync('git', ['init', '--quiet', '--bare', '--initial-branch=main', path], { encoding: 'utf8' });
  if (r.status !== 0) throw new ControlPlaneError(`git init ${path} failed: ${(r.stderr || String(r.error)).trim()}`);
  return `${state.gitUrl}/${name}.git`;
}

/** Stops what startGitOps started in this cluster folder (nothing when it never ran). */
export async function stopGitOps(clusterDir: string): Promise<void> {
  await stopAddon(clusterDir, ADDON);
  rmSync(layout(clusterDir).state, { force: true });
}
