/**
 * The local cluster's OCI registry: the distribution registry (gomod/registry, built from the Go
 * module proxy with its filesystem and in-memory storage drivers only), an add-on of the cluster
 * (addons.ts) started by `npm run registry:up` or a test, stopped with the cluster. It listens on the host's loopback only (plain HTTP: nothing leaves
 * 127.0.0.1), keeps its storage and config in `<cluster folder>/registry/`, and is reachable from
 * the node's containerd under the same address, 127.0.0.1:<port>: a forwarder pair joined by a
 * Unix socket in the folder carries the node namespace's 127.0.0.1:<port> to the host's (as the
 * node's API server forwarders do, node/node.ts), and a hosts.toml in the node's containerd
 * registry config folder tells containerd to pull from it over HTTP. So one reference,
 * `127.0.0.1:<port>/repo@sha256:...`, is pushed from the host and pulled by the kubelet.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownModuleGroup, pinnedVersion, resolveCached, type BuildGroup } from '../../ship/gobuild.js';
import { formatDuration } from '../../ship/errors.js';
import { recordAddon, stopAddon } from './addons.js';
import { freePort, type ControlPlaneState } from './cluster.js';
import { nodeLayout } from './node/node.js';
import { httpOk, launch, ownsProcess, waitFor, type Launched } from './process.js';

const ADDON = 'registry';
const MODULE = 'github.com/distribution/distribution/v3';

export interface RegistryState {
  /** `127.0.0.1:<port>`: push to it from the host, pull from it on the node. */
  address: string;
  pids: { registry: number; forwardHost?: number; forwardNode?: number };
}

const layout = (clusterDir: string) => {
  const dir = join(clusterDir, 'registry');
  return {
    dir,
    config: join(dir, 'config.yml'),
    data: join(dir, 'data'),
    state: join(dir, 'state.json'),
    socket: join(dir, 'registry.sock'),
  };
};

export async function ensureRegistry(log: (line: string) => void = (l) => console.error(l)): Promise<string> {
  const module = join(dirname(fileURLToPath(import.meta.url)), 'gomod', 'registry');
  const version = pinnedVersion(module, MODULE);
  // Keyed by the wrapper's content (its main.go picks the storage drivers), stamped with the version.
  const group: BuildGroup = {
    ...ownModuleGroup(module, 'registry', ['.'], ['registry'], `the distribution registry ${version}`),
    ldflags: `-s -w -X ${MODULE}/version.version=${version}`,
  };
  return resolveCached(group, 'registry', log);
}

/** The registry's configuration (distribution's config.yml): loopback, filesystem storage, deletes allowed. */
export function registryConfig(opts: { address: string; data: string; secret: string }): string {
  return `version: 0.1
log:
  level: warn
  accesslog:
    disabled: true
storage:
  filesystem:
    rootdirectory: ${JSON.stringify(opts.data)}
  delete:
    enabled: true
http:
  addr: ${opts.address}
  secret: ${opts.secret}
`;
}

/** containerd's hosts.toml for the registry: pulls and resolves over plain HTTP at the same address. */
export function containerdHostsToml(address: string): string {
  return `server = "http://${address}"

[host."http://${address}"]
  capabilities = ["pull", "resolve"]
`;
}

export function readRegistryState(clusterDir: string): RegistryState | undefined {
  try {
    return JSON.parse(readFileSync(layout(clusterDir).state, 'utf8')) as RegistryState;
  } catch {
    return undefined;
  }
}

/** Starts the registry of `cluster` (and its way in from the node, when there is one); idempotent. */
export async function startRegistry(cluster: ControlPlaneState, opts: { log?: (line: string) => void } = {}): Promise<RegistryState> {
  const log = opts.log ?? ((l: string) => console.error(l));
  const running = readRegistryState(cluster.dir);
  if (running && Object.values(running.pids).every((pid) => ownsProcess(pid, cluster.dir))) return running;
  await stopRegistry(cluster.dir);
  const started = Date.now();
  const bin = await ensureRegistry(log);
  const detached = cluster.apiserver?.detached ?? false;
  const l = layout(cluster.dir);
  mkdirSync(l.data, { recursive: true });
  const port = await freePort();
  const address = `127.0.0.1:${port}`;
  writeFileSync(l.config, registryConfig({ address, data: l.data, secret: randomBytes(16).toString('hex') }), { mode: 0o600 });
  const state: RegistryState = { address, pids: { registry: 0 } };
  const record = (key: keyof RegistryState['pids'], proc: Launched): void => {
    state.pids[key] = proc.pid;
    writeFileSync(l.state, JSON.stringify(state, null, 2) + '\n');
    // Stop order: the node's forwarder, the host's, then the registry.
    recordAddon(cluster.dir, ADDON, [state.pids.forwardNode ?? 0, state.pids.forwardHost ?? 0, state.pids.registry]);
  };
  try {
    const registry = launch('registry', bin, ['serve', l.config], cluster.dir, detached);
    record('registry', registry);
    await waitFor('the registry', registry, port, () => httpOk(`http://${address}/v2/`), 30_000);
    if (cluster.node) {
      record(
        'forwardHost',
        launch('forward-registry-host', 'socat', [`UNIX-LISTEN:${l.socket},fork,unlink-early`, `TCP:${address}`], cluster.dir, detached),
      );
      record(
        'forwardNode',
        launch(
          'forward-registry-node',
          'nsenter',
          [
            `--net=/run/netns/${cluster.node.netns}`,
            'socat',
            `TCP-LISTEN:${port},bind=127.0.0.1,fork,reuseaddr`,
            `UNIX-CONNECT:${l.socket}`,
          ],
          cluster.dir,
          detached,
        ),
      );
      const hosts = join(nodeLayout(cluster.dir).containerdHostsDir, address);
      mkdirSync(hosts, { recursive: true });
      writeFileSync(join(hosts, 'hosts.toml'), containerdHostsToml(address));
    }
    log(`registry: ${address} ready in ${formatDuration(Date.now() - started)}${cluster.node ? ', the node pulls from it' : ''}`);
    return state;
  } catch (err) {
    await stopRegistry(cluster.dir);
    throw err;
  }
}

/** Stops what startRegistry started in this cluster folder and removes its storage (nothing when it never ran). */
export async function stopRegistry(clusterDir: string): Promise<void> {
  const state = readRegistryState(clusterDir);
  await stopAddon(clusterDir, ADDON);
  if (state) rmSync(join(nodeLayout(clusterDir).containerdHostsDir, state.address), { recursive: true, force: true });
  rmSync(layout(clusterDir).dir, { recursive: true, force: true });
}
