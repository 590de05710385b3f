/**
 * Where the API server is and who we are: client-node's KubeConfig does the loading and the
 * authentication (kubeconfig files, in-cluster service account, exec plugins, token refresh).
 * Its errors never repeat a password of the server's or a proxy's URL (redact.ts).
 */
import { existsSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { ProxyConfigError, proxyFor } from './proxy.js';
import { redactText, redactUrl } from './redact.js';

export class KubeConfigError extends Error {
  override readonly name = 'KubeConfigError';
}

/**
 * path: a kubeconfig file; empty means in-cluster when running in a pod, else client-node's
 * default lookup ($KUBECONFIG, ~/.kube/config).
 */
export function loadKubeConfig(path: string | undefined): KubeConfig {
  const kc = new KubeConfig();
  if (path) {
    if (!fileExists(path)) {
      throw new KubeConfigError(
        `KUBECONFIG points at ${path}, which does not exist; set KUBECONFIG (or --kubeconfig) to a kubeconfig file, or leave it empty to run in-cluster`,
      );
    }
    try {
      kc.loadFromFile(path);
    } catch (err) {
      throw new KubeConfigError(`KUBECONFIG ${path} is not a valid kubeconfig: ${redactText((err as Error).message)}`);
    }
  } else if (process.env.KUBERNETES_SERVICE_HOST && fileExists('/var/run/secrets/kubernetes.io/serviceaccount/token')) {
    kc.loadFromCluster();
  } else {
    // client-node's fallback without any kubeconfig is http://localhost:8080, which would retry
    // forever against nothing; say what is missing instead.
    const home = join(homedir(), '.kube', 'config');
    if (!fileExists(home)) {
      throw new KubeConfigError(
        `no Kubernetes cluster configured: KUBECONFIG is empty, this is not a pod, and ${home} does not exist; set KUBECONFIG (or --kubeconfig) to a kubeconfig file`,
      );
    }
    kc.loadFromFile(home);
  }
  const cluster = kc.getCurrentCluster();
  if (!cluster) {
    throw new KubeConfigError('no Kubernetes cluster configured: set KUBECONFIG (or --kubeconfig), or run in a pod');
  }
  let server: URL;
  try {
    server = new URL(cluster.server);
  } catch {
    throw new KubeConfigError(`the kubeconfig cluster's server is not a URL: ${JSON.stringify(redactUrl(cluster.server))}`);
  }
  try {
    // Decided again by each RestClient; checked here so that a bad proxy setting stops the start.
    proxyFor(server, cluster.proxyUrl);
  } catch (err) {
    if (!(err instanceof ProxyConfigError)) throw err;
    throw new KubeConfigError(err.message);
  }
  return kc;
}

/**
 * existsSync, except that a refusal is a KubeConfigError: on Deno, reading a path outside
 * --allow-read throws NotCapable instead of answering, which would otherwise end in a stack trace.
 */
function fileExists(path: string): boolean {
  try {
    return existsSync(path);
  } catch (err) {
    throw new KubeConfigError(`cannot check ${path}: ${(err as Error).message}`);
  }
}
