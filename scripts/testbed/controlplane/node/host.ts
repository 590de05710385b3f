/**
 * What the node needs from the machine: root (network namespaces, mounts, cgroups, iptables), and
 * Debian's packages for the container runtime, the pod network and the Job image. Missing
 * packages are installed with apt-get, once (scripts/ship/apt.ts).
 */
import { ensureDebianPackages } from '../../../ship/apt.js';
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
