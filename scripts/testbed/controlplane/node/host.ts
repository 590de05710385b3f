/**
 * What the node needs from the machine: root (network namespaces, mounts, cgroups, iptables), and
 * Debian's packages for the container runtime, the pod network and the Job image. Missing
 * packages are installed with apt-get, once; `apt-get update` only when apt does not know them.
 */
import { spawnSync } from 'node:child_process';
import { ControlPlaneError } from '../../../ship/errors.js';

/** Debian package -> what the node uses it for. */
export const NODE_PACKAGES: Record<string, string> = {
  containerd: 'the container runtime (containerd, ctr, containerd-shim-runc-v2)',
  runc: 'the OCI runtime containerd starts containers with',
  'containernetworking-plugins': 'the CNI plugins of the pod network (bridge, host-local, portmap, loopback)',
  'busybox-static': 'the Job image (busybox:1.37, the operator default JOB_IMAGE)',
  iptables: 'kube-proxy and the CNI bridge (iptables rules inside the node network namespace)',
  conntrack: "kube-proxy's clean-up of stale UDP flows",
  socat: 'the forwarders that carry the node and pods to the API server on the loopback',
  iproute2: 'the node network namespace (ip netns, ip addr)',
};

function missingPackages(packages: Record<string, string>): string[] {
  return Object.keys(packages).filter((pkg) => {
    const q = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
    return !q.stdout.includes('install ok installed');
  });
}

function aptGet(args: string[]): { ok: boolean; output: string } {
  const r = spawnSync('apt-get', args, { encoding: 'utf8', env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' } });
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? r.error.message : ''}` };
}

/** Throws a clear error when the node cannot run here; installs missing packages otherwise. */
export function ensureHostReady(log: (line: string) => void): void {
  if (process.getuid?.() !== 0) {
    throw new ControlPlaneError(
      'The local node (kubelet, containerd, pod network) needs root: it creates a network namespace, mounts and cgroups.',
      'Run as root, or set ECHOPERATOR_NODE=false for a control plane without a node (pods then stay Pending).',
    );
  }
  ensureDebianPackages(NODE_PACKAGES, log);
}

/**
 * Installs the Debian packages (name -> what they are for) that are missing, with apt-get, once;
 * `apt-get update` only when apt does not know them. Throws a ControlPlaneError when it cannot.
 */
export function ensureDebianPackages(packages: Record<string, string>, log: (line: string) => void): void {
  const missing = missingPackages(packages);
  if (missing.length === 0) return;
  log(`node: installing ${missing.join(', ')} with apt-get (${missing.map((m) => packages[m]).join('; ')})`);
  const install = ['install', '-y', '-q', '--no-install-recommends', ...missing];
  let result = aptGet(install);
  if (!result.ok) {
    const update = aptGet(['update', '-q']);
    if (!update.ok)
      throw new ControlPlaneError(
        '`apt-get update` failed; the node needs Debian packages.',
        update.output.trim().split('\n').slice(-10).join('\n  '),
      );
    result = aptGet(install);
  }
  if (!result.ok) {
    throw new ControlPlaneError(
      `\`apt-get install ${missing.join(' ')}\` failed.`,
      result.output.trim().split('\n').slice(-10).join('\n  '),
    );
  }
}
