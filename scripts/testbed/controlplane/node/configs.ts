/**
 * The node's configuration files, as pure functions of the node's folder layout: containerd's
 * config, the CNI network, the kubelet's and kube-proxy's component configs. Every path they name
 * is under the node's folder, every address and name is inside the node's network namespace,
 * so two clusters on one machine share nothing but the kernel.
 */
import { NODE_IP, NODE_NAME, POD_CIDR } from '../network.js';

/** Where the node keeps everything: derived from the cluster folder, one place for every path. */
export interface NodeLayout {
  dir: string;
  containerdConfig: string;
  containerdRoot: string;
  containerdState: string;
  containerdSocket: string;
  /** containerd's registry host configs (`<host:port>/hosts.toml`), read at each pull: registry.ts writes the local registry's. */
  containerdHostsDir: string;
  runcRoot: string;
  cniConfDir: string;
  cniIpamDir: string;
  kubeletRoot: string;
  kubeletConfig: string;
  kubeletCertDir: string;
  podLogsDir: string;
  kubeProxyConfig: string;
  /** Unix sockets that carry TCP across the namespace boundary (see node.ts). */
  apiserverSocket: string;
  kubeletSocket: string;
  /** The network namespace's name (/run/netns/NAME), also the CNI network's name. */
  netns: string;
  /** The cgroup under which the kubelet puts every pod, in each v1 hierarchy. */
  cgroupRoot: string;
}

/** Debian's containernetworking-plugins. */
export const CNI_BIN_DIR = '/usr/lib/cni';
/** The bridge's name (inside the node's namespace, so every cluster can use it). */
const BRIDGE = 'cni-echo0';

/** containerd 1.6's config (version 2), with the CRI plugin as the kubelet needs it here. */
export function containerdConfig(l: NodeLayout, sandboxImage: string): string {
  const q = (s: string): string => JSON.stringify(s);
  return `version = 2
root = ${q(l.containerdRoot)}
state = ${q(l.containerdState)}
oom_score = 0
disabled_plugins = [
  "io.containerd.snapshotter.v1.aufs",
  "io.containerd.snapshotter.v1.btrfs",
  "io.containerd.snapshotter.v1.devmapper",
  "io.containerd.snapshotter.v1.zfs",
  "io.containerd.tracing.processor.v1.otlp",
  "io.containerd.internal.v1.tracing",
]

[grpc]
  address = ${q(l.containerdSocket)}

[ttrpc]
  address = ""

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.internal.v1.opt"]
  path = ${q(`${l.dir}/opt`)}

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ${q(sandboxImage)}
  # This VM has no CAP_SYS_RESOURCE: a container may not be given a lower oom_score_adj than
  # containerd's own, or runc fails with "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  disable_apparmor = true
  enable_selinux = false
  # Pods' network namespaces under our state folder, not /run/netns, so teardown finds them.
  netns_mounts_under_state_dir = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  enable_cdi = false

  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ${q(CNI_BIN_DIR)}
    conf_dir = ${q(l.cniConfDir)}
    max_conf_num = 1

  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"

    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"

      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = ${q(l.runcRoot)}

  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = ${q(l.containerdHostsDir)}
`;
}

/**
 * One bridge network with host-local addresses from POD_CIDR; its IPAM state in our folder. The
 * network is named after the cluster: libcni caches results in /var/lib/cni/results/NETWORK-*,
 * a fixed folder, so the name tells teardown which are ours.
 */
export function cniConflist(l: NodeLayout): string {
  return (
    JSON.stringify(
      {
        cniVersion: '1.0.0',
        name: l.netns,
        plugins: [
          {
            type: 'bridge',
            bridge: BRIDGE,
            isGateway: true,
            ipMasq: true,
            hairpinMode: true,
            ipam: { type: 'host-local', ranges: [[{ subnet: POD_CIDR }]], routes: [{ dst: '0.0.0.0/0' }], dataDir: l.cniIpamDir },
          },
          { type: 'portmap', capabilities: { portMappings: true } },
        ],
      },
      null,
      2,
    ) + '\n'
  );
}

/**
 * The kubelet: cgroupfs driver (this VM mounts cgroup v1; Kubernetes 1.34 still runs on it), every
 * path in our folder, authenticated and authorized access only (client certificates from the
 * cluster CA; anything else asks the API server), and eviction thresholds low enough that a
 * nearly full developer disk does not evict the tests' pods.
 */
export function kubeletConfig(l: NodeLayout, opts: { port: number; clientCaFile: string }): string {
  return (
    JSON.stringify(
      {
        apiVersion: 'kubelet.config.k8s.io/v1beta1',
        kind: 'KubeletConfiguration',
        address: '127.0.0.1',
        port: opts.port,
        readOnlyPort: 0,
        healthzBindAddress: '127.0.0.1',
        healthzPort: 10248,
        authentication: {
          anonymous: { enabled: false },
          webhook: { enabled: true },
          x509: { clientCAFile: opts.clientCaFile },
        },
        authorization: { mode: 'Webhook' },
        cgroupDriver: 'cgroupfs',
        cgroupRoot: l.cgroupRoot,
        failCgroupV1: false,
        failSwapOn: false,
        containerRuntimeEndpoint: `unix://${l.containerdSocket}`,
        imageServiceEndpoint: `unix://${l.containerdSocket}`,
        podLogsDir: l.podLogsDir,
        volumePluginDir: `${l.kubeletRoot}/volume-plugins`,
        resolvConf: '',
        clusterDomain: 'cluster.local',
        evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'nodefs.inodesFree': '1%', 'imagefs.available': '1%' },
        imageGCHighThresholdPercent: 100,
        imageGCLowThresholdPercent: 99,
        serializeImagePulls: false,
        rotateCertificates: false,
        serverTLSBootstrap: false,
        protectKernelDefaults: false,
        shutdownGracePeriod: '0s',
        nodeStatusReportFrequency: '10s',
        logging: { format: 'text' },
      },
      null,
      2,
    ) + '\n'
  );
}

/** kube-proxy in iptables mode, inside the node's namespace; it leaves the host's conntrack sysctls alone. */
export function kubeProxyConfig(kubeconfig: string): string {
  return (
    JSON.stringify(
      {
        apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
        kind: 'KubeProxyConfiguration',
        clientConnection: { kubeconfig },
        hostnameOverride: NODE_NAME,
        mode: 'iptables',
        clusterCIDR: POD_CIDR,
        healthzBindAddress: '127.0.0.1:10256',
        metricsBindAddress: '127.0.0.1:10249',
        oomScoreAdj: 0,
        // Global sysctls (nf_conntrack_max) cannot be set from a network namespace: leave them.
        conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: '0s', tcpCloseWaitTimeout: '0s' },
        iptables: { masqueradeAll: false, syncPeriod: '30s', minSyncPeriod: '1s', localhostNodePorts: false },
        nodePortAddresses: [`${NODE_IP}/32`],
      },
      null,
      2,
    ) + '\n'
  );
}
