/**
 * Installing the synthesized manifests (infra/) on the test control plane, and acting as the
 * operator's ServiceAccount: what an end-to-end test needs to check the install itself, or to run
 * the operator under exactly the permissions the install grants.
 *
 *   const install = installEchoperator(t, { ha: { enabled: true } });
 *   startOperator(t, { KUBECONFIG: install.kubeconfig, NAMESPACE: install.namespace, ... });
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { stringify } from 'yaml';
import { synthesize, type Manifest } from '../../infra/chart.js';
import type { Echoperator, EchoperatorProps } from '../../infra/echoperator.js';
import { currentKubeconfig, eventually, kubectl, kubectlOk, testNamespace } from './kube.js';

/** The field manager of every server-side apply the tests make (also used for crds/). */
export const TEST_FIELD_MANAGER = 'echoperator-tests';

/** Kinds that make the operator run in the cluster; left out with `workload: false`. */
const WORKLOAD_KINDS = new Set(['Deployment', 'Service', 'PodDisruptionBudget']);
/** Cluster-scoped kinds of an install, deleted after the test (the CRDs are shared and stay). */
const CLUSTER_SCOPED_KINDS = new Set([
  'ClusterRole',
  'ClusterRoleBinding',
  'ValidatingAdmissionPolicy',
  'ValidatingAdmissionPolicyBinding',
]);

export interface InstallOptions {
  /**
   * Apply the Deployment, metrics Service and PodDisruptionBudget too. Off when a test runs the
   * operator itself (from source) with {@link Install.kubeconfig}. @default true
   */
  workload?: boolean;
  /** Lifetime of the ServiceAccount token in the kubeconfig. @default '1h' */
  tokenDuration?: string;
}

export interface Install {
  /** The operator's namespace (created for the test and deleted after it unless props named one). */
  namespace: string;
  serviceAccount: string;
  /** The ServiceAccount as a user name, for `kubectl --as`. */
  user: string;
  /** A kubeconfig file that authenticates as the ServiceAccount (bearer token), deleted after the test. */
  kubeconfig: string;
  /** The manifests as applied (YAML file), and as objects. */
  manifestFile: string;
  objects: Manifest[];
  /** The construct: resolved props, settings (the ConfigMap's data), names. */
  echoperator: Echoperator;
}

/**
 * Synthesizes the install for `props`, server-side applies it, waits for the CRDs, and returns a
 * kubeconfig for the operator's ServiceAccount.
 *
 * Without props.namespace, a fresh namespace (labelled enforce=restricted) is created and deleted
 * after the test; a namespace named in props (and every watched namespace) is the caller's to
 * create and delete. The ClusterRole, ClusterRoleBinding and the confinement policy and binding
 * are deleted after the test; the CRDs are shared by every test and are never deleted.
 */
export function installEchoperator(t: TestContext, props: EchoperatorProps = {}, opts: InstallOptions = {}): Install {
  const namespace = props.namespace ?? testNamespace(t, 'echoperator', { 'pod-security.kubernetes.io/enforce': 'restricted' });
  // The confinement policy on, as in a default install, unless a test turns it off: every flow
  // under the ServiceAccount's token then also proves the policy lets the operator work.
  const synthesized = synthesize({ confineServiceAccount: true, ...props, namespace });
  const { echoperator } = synthesized;
  const partial = opts.workload === false;
  const objects = partial ? synthesized.objects.filter((o) => !WORKLOAD_KINDS.has(o.kind)) : synthesized.objects;

  const dir = mkdtempSync(join(tmpdir(), 'echoperator-install-'));
  t.after(() => {
    for (const o of objects) {
      if (CLUSTER_SCOPED_KINDS.has(o.kind)) {
        kubectl(['delete', `${o.kind.toLowerCase()}.${o.apiVersion.split('/')[0]}`, o.metadata.name, '--ignore-not-found', '--wait=false']);
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const manifestFile = join(dir, 'echoperator.k8s.yaml');
  // The exact bytes `npm run synth` would write for these props (re-serialized only when filtered).
  writeFileSync(manifestFile, partial ? objects.map((o) => stringify(o, { lineWidth: 0 })).join('---\n') : synthesized.yaml);
  applyManifests(manifestFile);
  const crds = objects.filter((o) => o.kind === 'CustomResourceDefinition').map((o) => `crd/${o.metadata.name}`);
  if (crds.length) kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', ...crds]);

  const serviceAccount = echoperator.serviceAccountName;
  const kubeconfig = join(dir, 'serviceaccount.kubeconfig');
  writeFileSync(kubeconfig, serviceAccountKubeconfig(namespace, serviceAccount, opts.tokenDuration ?? '1h'));
  return {
    namespace,
    serviceAccount,
    user: `system:serviceaccount:${namespace}:${serviceAccount}`,
    kubeconfig,
    manifestFile,
    objects,
    echoperator,
  };
}

/** `kubectl apply --server-side` of a file, as the tests' field manager (taking over conflicts). */
export function applyManifests(file: string): string {
  return kubectlOk(['apply', '--server-side', '--force-conflicts', `--field-manager=${TEST_FIELD_MANAGER}`, '-f', file]);
}

/** `kubectl diff --server-side` of a file against the cluster: exit 0 = no difference, 1 = differences. */
export function diffManifests(file: string): { code: number; stdout: string; stderr: string } {
  return kubectl(['diff', '--server-side', '--force-conflicts', `--field-manager=${TEST_FIELD_MANAGER}`, '-f', file]);
}

/**
 * A kubeconfig (YAML text) for the test cluster that authenticates with a fresh token of the
 * ServiceAccount (`kubectl create token`), and nothing else: no client certificate.
 */
export function serviceAccountKubeconfig(namespace: string, serviceAccount: string, duration = '1h'): string {
  const { cluster } = currentKubeconfig();
  if (!cluster.server) throw new Error('the test kubeconfig has no cluster');
  const token = kubectlOk(['create', 'token', serviceAccount, '-n', namespace, `--duration=${duration}`]).trim();
  const name = `${namespace}-${serviceAccount}`;
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'test', cluster }],
    users: [{ name, user: { token } }],
    contexts: [{ name, context: { cluster: 'test', user: name, namespace } }],
    'current-context': name,
  });
}

/** Server-side applies only the synthesized CRDs (shared, never deleted) and waits until served. */
export function applySynthesizedCrds(t: TestContext): void {
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-crds-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const crds = synthesize({ createNamespace: false }).objects.filter((o) => o.kind === 'CustomResourceDefinition');
  const file = join(dir, 'crds.yaml');
  writeFileSync(file, crds.map((o) => stringify(o, { lineWidth: 0 })).join('---\n'));
  applyManifests(file);
  kubectlOk(['wait', '--for=condition=Established', '--timeout=60s', ...crds.map((o) => `crd/${o.metadata.name}`)]);
}

/** Writes the synthesized manifests for `props` to a temporary file (deleted after the test). */
export function writeManifests(t: TestContext, props: EchoperatorProps): string {
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-manifests-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'echoperator.k8s.yaml');
  writeFileSync(file, synthesize(props).yaml);
  return file;
}

/**
 * Resolves once the install's confinement policy refuses the ServiceAccount a Job it does not
 * make (a dry run in `namespace`, where its RBAC allows Jobs), i.e. once the API server's admission
 * has loaded the policy and its binding; the refusal's text, which names the policy. Rejects when
 * the install has no policy.
 */
export async function confinementActive(install: Install, namespace: string): Promise<string> {
  const policy = install.echoperator.confinementPolicyName;
  if (!policy) throw new Error('the install has no confinement policy (confineServiceAccount: false)');
  const foreign = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'confinement-probe', namespace },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'example.invalid/probe:1' }] } } },
  };
  return eventually(`the ValidatingAdmissionPolicy ${policy} to refuse ${install.user} a foreign Job`, () => {
    const r = kubectl(['--kubeconfig', install.kubeconfig, 'create', '--dry-run=server', '-f', '-'], { input: JSON.stringify(foreign) });
    return r.code !== 0 && r.stderr.includes(`ValidatingAdmissionPolicy '${policy}'`) && r.stderr.trim();
  });
}
