/**
 * npm run cluster:up | cluster:down | cluster:status, `npm run gitops:up` (Flux and a git server
 * against the running cluster; cluster:down stops them too), `npm run registry:up` (an OCI
 * registry on the loopback that the node pulls from; cluster:down stops it too), and `cluster exec -- CMD...` which
 * runs a command against a control plane (reused or private) and stops what it started afterwards.
 */
import { spawn } from 'node:child_process';
import { ensureBinaries, ensureNodeBinaries, kubernetesVersion, nodeKubernetesVersion } from './controlplane/assets.js';
import { ADD_ON_BUILDS, isAddOnName, type AddOnName } from './controlplane/addon-builds.js';
import { isRunning, readState, startControlPlane, stopControlPlane, wantNode } from './controlplane/cluster.js';
import { machineLeftovers } from './controlplane/node/node.js';
import { ControlPlaneError, exitWithError } from '../ship/errors.js';
import { acquireControlPlane, defaultClusterDir, runningDefaultCluster } from './controlplane/session.js';
import { FLUX_NAMESPACE, startGitOps } from './controlplane/gitops.js';
import { loadOperatorImage } from './operator-image.js';
import { startRegistry } from './controlplane/registry.js';

function printExport(kubeconfig: string): void {
  console.log(`export KUBECONFIG=${kubeconfig}`);
}

async function up(): Promise<void> {
  const dir = defaultClusterDir();
  const existing = readState(dir);
  if (existing && isRunning(existing)) {
    console.error(
      `control plane: already running at ${existing.server} (Kubernetes ${existing.kubernetesVersion}, since ${existing.startedAt})`,
    );
    printExport(existing.kubeconfig);
    return;
  }
  if (existing) await stopControlPlane(existing); // leftovers of one that died
  const portArg = process.env.APISERVER_PORT ? Number(process.env.APISERVER_PORT) : undefined;
  const state = await startControlPlane({ dir, detached: true, apiserverPort: portArg, node: wantNode() });
  console.error(`control plane: Kubernetes ${state.kubernetesVersion}; logs in ${dir}/logs; stop it with \`npm run cluster:down\``);
  printExport(state.kubeconfig);
}

async function down(): Promise<void> {
  const dir = defaultClusterDir();
  const state = readState(dir);
  if (!state) {
    console.error('control plane: none running');
    return;
  }
  await stopControlPlane(state);
  const pids = [...Object.values(state.pids), ...Object.values(state.node?.pids ?? {})];
  console.error(`control plane: stopped (pids ${pids.join(', ')})${state.node ? ' and its node' : ''}, removed ${dir}`);
}

function status(): void {
  const state = readState(defaultClusterDir());
  if (!state || !isRunning(state)) {
    console.error('control plane: not running (start it with `npm run cluster:up`)');
    process.exitCode = 3;
    return;
  }
  console.error(
    `control plane: running at ${state.server}, Kubernetes ${state.kubernetesVersion}, ${state.node ? `node ${state.node.netns}` : 'no node'}`,
  );
  printExport(state.kubeconfig);
}

async function exec(argv: string[]): Promise<void> {
  const isPrivate = argv[0] === '--private';
  const command = isPrivate ? argv.slice(1) : argv;
  if (command[0] === '--') command.shift();
  if (command.length === 0) throw new Error('usage: cluster exec [--private] -- COMMAND [ARGS...]');
  const lease = await acquireControlPlane({ private: isPrivate });
  console.error(`control plane: using ${lease.describe}`);
  const child = spawn(command[0]!, command.slice(1), {
    stdio: 'inherit',
    env: {
      ...process.env,
      KUBECONFIG: lease.kubeconfig,
      ECHOPERATOR_CONTROL_PLANE_PIDS: lease.ownedPids.join(','),
    },
  });
  // Our own signal handlers (in acquireControlPlane) stop the control plane; pass the signal on too.
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, () => child.kill(s));
  const code = await new Promise<number>((resolve) => child.on('close', (c, sig) => resolve(c ?? (sig ? 128 + 15 : 1))));
  await lease.release();
  process.exit(code);
}

async function main(): Promise<void> {
  const [verb, ...rest] = process.argv.slice(2);
  switch (verb) {
    case 'up':
      return up();
    case 'down':
      return down();
    case 'status':
      return status();
    case 'build': {
      if (rest.length === 0) {
        await ensureBinaries();
        if (wantNode()) await ensureNodeBinaries();
        console.error(`control plane: binaries for Kubernetes ${kubernetesVersion()} (node ${nodeKubernetesVersion()}) are ready`);
        return;
      }
      // `cluster build NAME...`: add-ons, one after the other (npm test runs this in the background).
      const unknown = rest.filter((name) => !isAddOnName(name));
      if (unknown.length)
        throw new ControlPlaneError(`No add-on named ${unknown.join(', ')}.`, `Accepted values: ${Object.keys(ADD_ON_BUILDS).join(', ')}.`);
      for (const name of rest as AddOnName[]) await ADD_ON_BUILDS[name].ensure();
      console.error(`control plane: ${rest.join(', ')} ready`);
      return;
    }
    case 'gitops': {
      const state = runningDefaultCluster();
      if (!state) throw new ControlPlaneError('No cluster is running: start one with `npm run cluster:up`.');
      const gitops = await startGitOps(state);
      console.error(`gitops: ${FLUX_NAMESPACE} runs source-controller and kustomize-controller; repositories: ${gitops.gitUrl}/NAME.git`);
      console.error(
        `gitops: make one with \`git init --bare --initial-branch=main ${gitops.dir}/repositories/NAME.git\`; see docs/gitops.md`,
      );
      return;
    }
    case 'registry': {
      const state = runningDefaultCluster();
      if (!state) throw new ControlPlaneError('No cluster is running: start one with `npm run cluster:up`.');
      const registry = await startRegistry(state);
      console.error(`registry: push to ${registry.address} (plain HTTP, loopback only), e.g.`);
      console.error(`  npm run release -- --push ${registry.address} --plain-http --sign-key cosign.key`);
      return;
    }
    case 'image': {
      const state = runningDefaultCluster();
      if (!state) throw new ControlPlaneError('No cluster is running: start one with `npm run cluster:up`.');
      console.error(`image: loaded ${await loadOperatorImage(state)} into the node`);
      return;
    }
    case 'leftovers': {
      // After the tests and `cluster:down`: anything of a node still on the machine is a leak.
      const found = machineLeftovers();
      for (const f of found) console.error(`left behind: ${f}`);
      if (found.length) process.exitCode = 1;
      return;
    }
    case 'exec':
      return exec(rest);
    default:
      console.error(
        'usage: cluster up | down | status | build [ADD-ON...] | image | gitops | registry | leftovers | exec [--private] -- COMMAND...',
      );
      process.exitCode = 2;
  }
}

main().catch(exitWithError);
