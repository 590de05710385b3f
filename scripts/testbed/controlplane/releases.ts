/**
 * The Kubernetes releases the local cluster runs, and which one a run gets.
 *
 * Each release is a Go module of its own, gomod/kubernetes/<minor>/ (go.mod + go.sum pinning
 * k8s.io/kubernetes and its staging modules at their published twins). KUBERNETES_VERSION picks
 * one by minor (`1.31`) or exact version (`v1.31.0`); unset, the default: the newest release the
 * Go module proxy serves whole. The oldest is the oldest minor the install supports (README,
 * "Supported Kubernetes versions", says why: every API the CRDs and the install use is GA there).
 *
 * The node. The control plane (kube-apiserver, kube-controller-manager, kube-scheduler) runs the
 * selected release; the node's kubelet and kube-proxy run it too up to NEWEST_NODE_MINOR, and that
 * release above it. Kubernetes' version-skew policy lets a kubelet and kube-proxy be up to three
 * minors older than kube-apiserver, and this machine needs it: from 1.35 the kubelet refuses
 * cgroup v1 by default, and after 1.35 it needs containerd 2 (the node runs Debian's containerd,
 * 1.6, on a cgroup v1 host). The default release (1.37) is three minors above 1.34.
 */
import { join } from 'node:path';
import { ControlPlaneError } from '../../ship/errors.js';

export interface KubernetesRelease {
  /** `v1.37.2`. */
  version: string;
  /** `1.37`. */
  minor: string;
  /** The Go module pinning it. */
  module: string;
}

/** Newest first; the first is the default, the last the oldest supported. */
const VERSIONS = ['v1.37.2', 'v1.34.4', 'v1.31.0'] as const;

/** The newest kubelet and kube-proxy this machine's node runs (see above). */
export const NEWEST_NODE_MINOR = '1.34';

export function releaseOf(version: string, gomodRoot: string): KubernetesRelease {
  const minor = version.slice(1).split('.').slice(0, 2).join('.');
  return { version, minor, module: join(gomodRoot, 'kubernetes', `v${minor}`) };
}

export const minorNumber = (minor: string): number => Number(minor.split('.')[1]);

/** Every release the local cluster can run, newest first. */
export function releases(gomodRoot: string): KubernetesRelease[] {
  return VERSIONS.map((v) => releaseOf(v, gomodRoot));
}

/** The release KUBERNETES_VERSION names, or the default; an unknown one stops the run naming those it can. */
export function selectedRelease(gomodRoot: string, env: NodeJS.ProcessEnv = process.env): KubernetesRelease {
  const all = releases(gomodRoot);
  const wanted = env.KUBERNETES_VERSION?.trim();
  if (!wanted) return all[0]!;
  const found = all.find((r) => r.version === wanted || `v${r.minor}` === wanted || r.minor === wanted || r.version === `v${wanted}`);
  if (found) return found;
  throw new ControlPlaneError(
    `KUBERNETES_VERSION=${wanted} is not a release the local cluster runs.`,
    `Accepted values: ${all.map((r) => `${r.minor} (${r.version})`).join(', ')}; unset for the default, ${all[0]!.minor}.`,
  );
}

/** The kubelet's and kube-proxy's release for a control plane of `release` (see above). */
export function nodeRelease(release: KubernetesRelease, gomodRoot: string): KubernetesRelease {
  if (minorNumber(release.minor) <= minorNumber(NEWEST_NODE_MINOR)) return release;
  return releases(gomodRoot).find((r) => r.minor === NEWEST_NODE_MINOR)!;
}
