/**
 * A control plane for one run of something (the tests, the demo, a benchmark): the cluster in
 * KUBECONFIG when USE_EXISTING_CLUSTER=true, else the one `cluster:up` left running, else a
 * private one started now in a temporary folder and stopped when the run ends, also when it ends
 * by SIGINT, SIGTERM or SIGHUP.
 */
import { mkdtempSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { cacheRoot } from '../../ship/gobuild.js';
import { kubernetesVersion } from './assets.js';
import { isRunning, readState, startControlPlane, stopControlPlane, wantNode, type ControlPlaneState } from './cluster.js';
import { ControlPlaneError } from '../../ship/errors.js';

export interface ControlPlaneLease {
  kubeconfig: string;
  /** The processes this run started (empty when it reuses a cluster it did not start). */
  ownedPids: number[];
  describe: string;
  /** Stops what this run started; idempotent. */
  release(): Promise<void>;
}

/** Where `cluster:up` keeps the shared developer cluster. */
export function defaultClusterDir(): string {
  return join(cacheRoot(), 'clusters', 'default');
}

export function runningDefaultCluster(): ControlPlaneState | undefined {
  const state = readState(defaultClusterDir());
  return state && isRunning(state) ? state : undefined;
}

export interface AcquireOptions {
  /** Start a private cluster even when `cluster:up` left one running. */
  private?: boolean;
  /** Whether a cluster started here gets a node; wantNode() (ECHOPERATOR_NODE) when absent. */
  node?: boolean;
  /**
   * The caller runs pods: a running `cluster:up` cluster without a node (ECHOPERATOR_NODE=false)
   * is not reused, and a private cluster with a node is started instead.
   */
  needsNode?: boolean;
  /**
   * Awaited on SIGINT, SIGTERM or SIGHUP before a cluster started here is stopped and the process
   * exits: the caller stops what runs against the cluster first.
   */
  beforeSignalExit?: (signal: NodeJS.Signals) => Promise<void>;
}

export async function acquireControlPlane(opts: AcquireOptions = {}): Promise<ControlPlaneLease> {
  if (process.env.USE_EXISTING_CLUSTER === 'true') {
    const kubeconfig = process.env.KUBECONFIG || join(homedir(), '.kube', 'config');
    return { kubeconfig, ownedPids: [], describe: `existing cluster (KUBECONFIG=${kubeconfig})`, release: async () => {} };
  }
  const running = opts.private ? undefined : runningDefaultCluster();
  const nodeless = running && opts.needsNode && !running.node;
  // A run asks for one Kubernetes release (KUBERNETES_VERSION): a cluster of another is not it.
  const otherRelease = running && running.kubernetesVersion !== kubernetesVersion() ? running.kubernetesVersion : undefined;
  if (running && !nodeless && !otherRelease) {
    return {
      kubeconfig: running.kubeconfig,
      ownedPids: [],
      describe: `running control plane at ${running.server}`,
      release: async () => {},
    };
  }
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-cp-'));
  let state: ControlPlaneState | undefined;
  let released: Promise<void> | undefined;
  // What the folder's state file says, not what start returned: a restarted kube-apiserver (fault
  // tests, the fault campaign) has a new pid, which restartApiserver records there.
  const release = (): Promise<void> => (released ??= state ? stopControlPlane(readState(dir) ?? state) : Promise.resolve());
  const onSignal = (signal: NodeJS.Signals): void => {
    void (opts.beforeSignalExit?.(signal) ?? Promise.resolve())
      .catch(() => undefined)
      .then(release)
      .finally(() => process.exit(signal === 'SIGINT' ? 130 : signal === 'SIGHUP' ? 129 : 143));
  };
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(s, onSignal);
  try {
    state = await startControlPlane({ dir, detached: false, node: nodeless || (opts.node ?? wantNode()) });
  } catch (err) {
    await release();
    throw err instanceof ControlPlaneError ? err : new ControlPlaneError(String(err));
  }
  const started = state;
  return {
    kubeconfig: started.kubeconfig,
    ownedPids: [...Object.values(started.pids), ...Object.values(started.node?.pids ?? {})],
    describe: `private control plane at ${started.server}${nodeless ? ` (the one at ${running.server} has no node)` : ''}${otherRelease ? ` (the one at ${running?.server} runs ${otherRelease})` : ''}`,
    release: async () => {
      await release();
      for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.removeListener(s, onSignal);
    },
  };
}
