/**
 * The cluster's binaries: the control plane's (kube-apiserver, kube-controller-manager,
 * kube-scheduler, etcd), the node's (kubelet, kube-proxy, and the image tools: mkimage and pause),
 * of the Kubernetes release KUBERNETES_VERSION selects (releases.ts), and the add-ons' (Flux,
 * prometheus-operator, the Argo CD health harness, the local git server).
 *
 * Each is found, in order: in KUBEBUILDER_ASSETS (envtest's folder, so users of setup-envtest
 * skip the Go build; control plane and node only), or in the per-user cache, built there when
 * missing from the Go modules pinned under gomod/ (go.mod + go.sum) by ship/gobuild.ts.
 */
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownModuleGroup, pinnedVersion, resolveBinaries, resolveCached, type BuildGroup } from '../../ship/gobuild.js';
import { ensureImageTools } from '../../ship/image/tools.js';
import { nodeRelease, selectedRelease, type KubernetesRelease } from './releases.js';

export const ETCD_VERSION = 'v3.6.8';

const here = dirname(fileURLToPath(import.meta.url));
const gomodRoot = join(here, 'gomod');

/** The Kubernetes release this run's cluster runs: KUBERNETES_VERSION's, or the default. */
export function kubernetesRelease(env: NodeJS.ProcessEnv = process.env): KubernetesRelease {
  return selectedRelease(gomodRoot, env);
}

/** `v1.37.2`: the release this run's control plane runs. */
export function kubernetesVersion(): string {
  return kubernetesRelease().version;
}

/** The release of this run's node (kubelet, kube-proxy): see releases.ts. */
export function nodeKubernetesVersion(): string {
  return nodeRelease(kubernetesRelease(), gomodRoot).version;
}

export interface ControlPlaneBinaries {
  etcd: string;
  kubeApiserver: string;
  kubeControllerManager: string;
}

/** Without these the components report v0.0.0-master (and a node's kubeletVersion with it). */
function kubernetesLdflags(version: string): string {
  return [
    '-s -w',
    `-X k8s.io/component-base/version.gitVersion=${version}`,
    `-X k8s.io/component-base/version.gitMajor=${version.split('.')[0]!.slice(1)}`,
    `-X k8s.io/component-base/version.gitMinor=${version.split('.')[1]}`,
    '-X k8s.io/component-base/version.gitTreeState=clean',
  ].join(' ');
}

/** The control plane's Kubernetes components (kube-scheduler's skew allows no older one). */
function controlPlaneGroup(release: KubernetesRelease): BuildGroup {
  return {
    module: release.module,
    key: `kubernetes-${release.version}`,
    packages: ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'].map((c) => `k8s.io/kubernetes/cmd/${c}`),
    binaries: ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'],
    ldflags: kubernetesLdflags(release.version),
    describe: `kube-apiserver, kube-controller-manager and kube-scheduler ${release.version}`,
  };
}

/** The node's Kubernetes components, a cache entry of their own (their release may be older). */
function nodeGroup(release: KubernetesRelease): BuildGroup {
  return {
    module: release.module,
    key: `kubernetes-node-${release.version}`,
    packages: ['k8s.io/kubernetes/cmd/kubelet', 'k8s.io/kubernetes/cmd/kube-proxy'],
    binaries: ['kubelet', 'kube-proxy'],
    ldflags: kubernetesLdflags(release.version),
    describe: `kubelet and kube-proxy ${release.version}`,
  };
}

/** Argo CD's Go modules need Go 1.27 (their go line); the go command fetches this one from the module proxy. */
export const ARGOCD_GOTOOLCHAIN = 'go1.27.3';

/**
 * The Argo CD health harness (gomod/argocd-health): Argo CD's own health code (util/lua,
 * gitops-engine's health) pinned by its wrapper module, keyed by that module's content.
 */
export async function ensureArgoCdHealth(log: (line: string) => void = (l) => console.error(l)): Promise<string> {
  const module = join(gomodRoot, 'argocd-health');
  const version = pinnedVersion(module, 'github.com/argoproj/argo-cd/v3');
  const group: BuildGroup = {
    ...ownModuleGroup(module, 'argocd-health', ['.'], ['argocd-health'], `the Argo CD ${version} health harness`),
    toolchain: ARGOCD_GOTOOLCHAIN,
  };
  return resolveCached(group, 'argocd-health', log);
}

/** The local git server (githttp/): our own source, keyed by its content like the image tools. */
const githttpGroup = ownModuleGroup(join(here, 'githttp'), 'githttp', ['.'], ['githttp'], 'the local git server (githttp)');

/** The git server GitOps uses (a few seconds to build). */
export async function ensureGitServer(log: (line: string) => void = (l) => console.error(l)): Promise<string> {
  return resolveCached(githttpGroup, 'githttp', log);
}

const etcdGroup: BuildGroup = {
  module: join(gomodRoot, 'etcd'),
  key: `etcd-${ETCD_VERSION}`,
  packages: ['go.etcd.io/etcd/server/v3'],
  binaries: ['etcd'],
  renames: { server: 'etcd' },
  ldflags: '-s -w',
  describe: `etcd ${ETCD_VERSION}`,
};

/**
 * Flux's source-controller and kustomize-controller, each from a wrapper module of its own
 * (gomod/flux/*) with the controller's own replace directives, so each gets exactly the
 * dependency versions its release was built with. The CRDs they serve ship in their modules
 * (config/crd/bases) and are copied beside the binaries, under crds/, as is each controller's
 * generated ClusterRole (config/rbac/role.yaml), for scripts/testbed/controlplane/gitops.ts.
 */
function fluxGroup(controller: 'source-controller' | 'kustomize-controller'): BuildGroup {
  const module = join(gomodRoot, 'flux', controller);
  const path = `github.com/fluxcd/${controller}`;
  const version = pinnedVersion(module, path);
  return {
    module,
    key: `flux-${controller}-${version}`,
    packages: [path],
    binaries: [controller],
    ldflags: '-s -w',
    copies: [
      { module: path, from: 'config/crd/bases', to: 'crds' },
      { module: path, from: 'config/rbac/role.yaml', to: 'role.yaml' },
    ],
    describe: `Flux ${controller} ${version}`,
  };
}

export interface FluxBinaries {
  sourceController: string;
  kustomizeController: string;
}

/** Flux's two controllers, built like the control plane's when missing; their crds/ and role.yaml are beside each binary. */
export async function ensureFluxBinaries(log: (line: string) => void = (l) => console.error(l)): Promise<FluxBinaries> {
  const [source, kustomize] = [fluxGroup('source-controller'), fluxGroup('kustomize-controller')];
  return {
    sourceController: await resolveCached(source, 'source-controller', log),
    kustomizeController: await resolveCached(kustomize, 'kustomize-controller', log),
  };
}

export interface PrometheusOperatorBinaries {
  /** prometheus-operator's cmd/operator. */
  operator: string;
  /** The CRDs its module ships (example/prometheus-operator-crd), one YAML file per kind. */
  crds: string;
}

/**
 * prometheus-operator (gomod/prometheus-operator): cmd/operator alone, the one binary the
 * ServiceMonitor test runs, and its CRDs copied beside it under crds/.
 */
export async function ensurePrometheusOperator(log: (line: string) => void = (l) => console.error(l)): Promise<PrometheusOperatorBinaries> {
  const module = join(gomodRoot, 'prometheus-operator');
  const path = 'github.com/prometheus-operator/prometheus-operator';
  const version = pinnedVersion(module, path);
  const group: BuildGroup = {
    module,
    key: `prometheus-operator-${version}`,
    packages: [`${path}/cmd/operator`],
    binaries: ['operator'],
    ldflags: `-s -w -X github.com/prometheus/common/version.Version=${version.slice(1)}`,
    copies: [{ module: path, from: 'example/prometheus-operator-crd', to: 'crds' }],
    describe: `prometheus-operator ${version}`,
  };
  const operator = await resolveCached(group, 'operator', log);
  return { operator, crds: join(dirname(operator), 'crds') };
}

/** Returns the three binaries, building whichever are missing (minutes the first time). */
export async function ensureBinaries(log: (line: string) => void = (l) => console.error(l)): Promise<ControlPlaneBinaries> {
  const group = controlPlaneGroup(kubernetesRelease());
  return resolveBinaries(
    {
      etcd: [etcdGroup, 'etcd'],
      kubeApiserver: [group, 'kube-apiserver'],
      kubeControllerManager: [group, 'kube-controller-manager'],
    },
    log,
  );
}

export interface NodeBinaries {
  kubeScheduler: string;
  kubelet: string;
  kubeProxy: string;
  mkimage: string;
  pause: string;
}

/** The node's binaries (and the scheduler, of the control plane's release), built like the control plane's when missing. */
export async function ensureNodeBinaries(log: (line: string) => void = (l) => console.error(l)): Promise<NodeBinaries> {
  const release = kubernetesRelease();
  const node = nodeGroup(nodeRelease(release, gomodRoot));
  const kube = await resolveBinaries(
    {
      kubeScheduler: [controlPlaneGroup(release), 'kube-scheduler'],
      kubelet: [node, 'kubelet'],
      kubeProxy: [node, 'kube-proxy'],
    },
    log,
  );
  return { ...kube, ...(await ensureImageTools(log)) };
}
