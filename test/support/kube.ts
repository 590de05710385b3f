/**
 * What every end-to-end test needs: the control plane's kubeconfig (set by `npm test`), kubectl
 * against it, a namespace of its own, and polling until a condition holds.
 */
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { NO_PODS_ANNOTATIONS } from '../../scripts/testbed/controlplane/network.js';
import { kubectlFor, type Kubectl, type KubectlOptions, type KubectlResult } from '../../scripts/testbed/kubectl.js';
import { eventually } from './eventually.js';

export function kubeconfig(): string {
  const path = process.env.KUBECONFIG;
  if (!path) throw new Error('KUBECONFIG is not set: run end-to-end tests through `npm test`, which provides a control plane');
  return path;
}

export type { KubectlResult } from '../../scripts/testbed/kubectl.js';

/** Deadline of a test's kubectl call. */
export const KUBECTL_TIMEOUT_MS = 60_000;

const own = (): Kubectl => kubectlFor(kubeconfig(), { timeoutMs: KUBECTL_TIMEOUT_MS });

export function kubectl(args: string[], opts: KubectlOptions = {}): KubectlResult {
  return own().run(args, opts);
}

/** kubectl that must succeed; returns stdout. */
export function kubectlOk(args: string[], opts: KubectlOptions = {}): string {
  return own().ok(args, opts);
}

/** `kubectl ... -o json`, parsed as the API-server type the caller names (V1Job, Echo, ...). */
export function kubectlJson<T>(args: string[], opts: KubectlOptions = {}): T {
  return own().json<T>(args, opts);
}

/**
 * A list as the API server sends it (`kubectl get <resource> -o json`, a GET of a collection).
 * Its metadata as on the wire: client-node's V1ListMeta names `continue` `_continue`.
 */
export interface KubeList<T> {
  metadata?: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: T[];
}

/** The items of a list (`kubectl get <resource> -o json`) through `k`, as the API-server type the caller names. */
export function itemsOf<T>(k: Kubectl, args: string[], opts: KubectlOptions = {}): T[] {
  return k.json<KubeList<T>>(args, opts).items;
}

/** itemsOf with the tests' own kubectl. */
export function listItems<T>(args: string[], opts: KubectlOptions = {}): T[] {
  return itemsOf<T>(own(), args, opts);
}

/** A kubeconfig's cluster entry as `kubectl config view -o json` prints it. */
export interface KubeconfigCluster {
  server: string;
  'certificate-authority-data'?: string;
  [field: string]: unknown;
}

/** A kubeconfig's user entry as `kubectl config view -o json` prints it. */
export interface KubeconfigUser {
  token?: string;
  'client-certificate-data'?: string;
  'client-key-data'?: string;
  [field: string]: unknown;
}

/** `kubectl config view --raw --minify --flatten -o json`: the current context only, credentials inline. */
export interface KubeconfigView {
  clusters: { name: string; cluster: KubeconfigCluster }[];
  users: { name: string; user: KubeconfigUser }[];
  [field: string]: unknown;
}

/**
 * The kubeconfig at `path` (the tests' own unless told) reduced to its current context, with the
 * cluster and user that context names (entries of `view`, so changing them changes `view`).
 */
export function currentKubeconfig(path = kubeconfig()): { view: KubeconfigView; cluster: KubeconfigCluster; user: KubeconfigUser } {
  const view = kubectlFor(path, { timeoutMs: KUBECTL_TIMEOUT_MS }).json<KubeconfigView>([
    'config',
    'view',
    '--raw',
    '--minify',
    '--flatten',
  ]);
  const cluster = view.clusters[0]?.cluster;
  const user = view.users[0]?.user;
  if (!cluster || !user) throw new Error(`the kubeconfig ${path} has no current cluster and user`);
  return { view, cluster, user };
}

/**
 * A fresh namespace for one test, deleted (without waiting) when the test ends. Its pods stay off
 * the node (Pending, as without one) unless `pods: true`: only tests that read what a pod did run
 * pods, so the rest stay fast and their Jobs' status is theirs to write.
 */
export function testNamespace(t: TestContext, prefix = 't', labels: Record<string, string> = {}, opts: { pods?: boolean } = {}): string {
  const slug = prefix
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .slice(0, 40)
    .replace(/-+$/, '');
  const name = `${slug}-${randomBytes(3).toString('hex')}`;
  const metadata = { name, labels, annotations: opts.pods ? {} : NO_PODS_ANNOTATIONS };
  kubectlOk(['create', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata }) });
  t.after(() => {
    kubectl(['delete', 'namespace', name, '--wait=false']);
  });
  return name;
}

export { eventually };

/** True when the run uses the local control plane this project builds (not USE_EXISTING_CLUSTER). */
export function onLocalControlPlane(): boolean {
  return process.env.USE_EXISTING_CLUSTER !== 'true';
}

/** Applies an Echo with `message` (client-side apply, as a user would). */
export function applyEcho(ns: string, name: string, message: string): void {
  kubectlOk(['apply', '-f', '-'], {
    namespace: ns,
    input: JSON.stringify({ apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', metadata: { name }, spec: { message } }),
  });
}

/** Applies a ScheduledEcho (client-side apply, as a user would). */
export function applyScheduledEcho(ns: string, name: string, spec: { message: string; schedule: string }): void {
  kubectlOk(['apply', '-f', '-'], {
    namespace: ns,
    input: JSON.stringify({ apiVersion: 'mmontes.io/v1alpha1', kind: 'ScheduledEcho', metadata: { name }, spec }),
  });
}

/** Echo `hi` and ScheduledEcho `tick` on `schedule` (each printing its name), applied together as one List. */
export function applyHiAndTick(ns: string, schedule: string): void {
  kubectlOk(['apply', '-f', '-'], {
    namespace: ns,
    input: JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [
        { apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', metadata: { name: 'hi' }, spec: { message: 'hi' } },
        {
          apiVersion: 'mmontes.io/v1alpha1',
          kind: 'ScheduledEcho',
          metadata: { name: 'tick' },
          spec: { message: 'tick', schedule },
        },
      ],
    }),
  });
}

/** The Jobs labelled as made for Echo `echo`. */
export function jobsOf(ns: string, echo: string): V1Job[] {
  return listItems<V1Job>(['get', 'jobs', '-l', `mmontes.io/echo=${echo}`], { namespace: ns });
}

/**
 * The condition of `type` in an object's status.conditions: an Echo's, a ScheduledEcho's, a Pod's,
 * a Flux Kustomization's (undefined when the object, its status or the condition is missing).
 */
export function conditionOf<C extends { type: string }>(obj: { status?: { conditions?: C[] } } | undefined, type: string): C | undefined {
  return obj?.status?.conditions?.find((c) => c.type === type);
}

/** Waits until Echo `echo` has exactly one Job, and returns it. */
export async function onlyJobOf(ns: string, echo: string, what = 'the Job'): Promise<V1Job> {
  const [job] = await eventually(what, () => jobsOf(ns, echo).length === 1 && jobsOf(ns, echo));
  return job!;
}
