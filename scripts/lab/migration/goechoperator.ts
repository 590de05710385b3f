/**
 * The Go echoperator (github.com/mmontes11/echoperator, client-go v0.21), built from its public
 * source as mirrored on this machine, and installed the way its Helm chart
 * (mmontes11/charts, charts/echoperator) installs it, except that the process runs on the host:
 * its CRDs created from the chart's crds/ (Helm creates them, never applies), its ServiceAccount,
 * ClusterRole and ClusterRoleBinding as the chart renders them for a release named
 * `echoperator`, and its ConfigMap's environment (NAMESPACE = the release namespace).
 *
 * Guarantees: the binary is built once per source commit into the cache (CGO off, `nice`d) and
 * named `echoperator`, as its Dockerfile names it, so its client-go User-Agent, and so the field
 * manager the API server records for its writes, is the one a real install has. Nothing here is
 * fetched by npm test: the source must be mirrored (MIRROR below) or the build stops, saying so.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, renameSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { cacheRoot } from '../../ship/gobuild.js';
import { ControlPlaneError } from '../../ship/errors.js';
import type { Kubectl } from '../../testbed/kubectl.js';

/** Bare git mirrors of the Go operator and of its Helm chart's repository. */
export const MIRROR = process.env.GO_ECHOPERATOR_MIRROR ?? '/work/.mirror/mmontes11+echoperator/repo';
export const CHART_MIRROR = process.env.GO_CHART_MIRROR ?? '/work/.mirror/mmontes11+charts/repo';
/** The chart as it was before its removal from mmontes11/charts (commit 6f143ef deleted it). */
export const CHART_REVISION = '6f143ef^';

/** The chart's fullname for a release named `echoperator` (its _helpers.tpl: the release name contains the chart's). */
export const GO_RELEASE = 'echoperator';

const git = (dir: string, args: string[]): string => {
  const r = spawnSync('git', ['-C', dir, ...args], { encoding: 'utf8', maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new ControlPlaneError(`git -C ${dir} ${args.join(' ')} failed: ${r.stderr.trim()}`);
  return r.stdout;
};

export interface GoSource {
  commit: string;
  /** The source tree, extracted. */
  dir: string;
}

/** Extracts the mirrored source at HEAD into a temporary folder (the caller removes it). */
export function goSource(): GoSource {
  if (!existsSync(MIRROR))
    throw new ControlPlaneError(
      `The Go echoperator's source is not mirrored at ${MIRROR}.`,
      'Mirror github.com/mmontes11/echoperator there (a bare clone), or set GO_ECHOPERATOR_MIRROR.',
    );
  const commit = git(MIRROR, ['rev-parse', 'HEAD']).trim();
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-go-src-'));
  const archive = spawnSync('sh', ['-c', `git -C '${MIRROR}' archive HEAD | tar -x -C '${dir}'`], { encoding: 'utf8' });
  if (archive.status !== 0) throw new ControlPlaneError(`Could not extract ${MIRROR}: ${archive.stderr.trim()}`);
  return { commit, dir };
}

/** The binary for the source's commit, built when missing (modules from the Go module proxy). */
export function buildGoEchoperator(src: GoSource, log: (line: string) => void): string {
  const out = join(cacheRoot(), 'migration', `go-echoperator-${src.commit.slice(0, 12)}`, 'echoperator');
  if (existsSync(out)) return out;
  mkdirSync(join(out, '..'), { recursive: true });
  log(`building the Go echoperator ${src.commit.slice(0, 12)} (go build, modules from the Go module proxy)`);
  const partial = `${out}.partial-${process.pid}`;
  const r = spawnSync('nice', ['-n', '10', 'go', 'build', '-o', partial, './cmd/echoperator'], {
    cwd: src.dir,
    encoding: 'utf8',
    // Its go.sum predates some of the module graph a current Go resolves: -mod=mod fills it in.
    env: { ...process.env, CGO_ENABLED: '0', GOFLAGS: '-mod=mod' },
  });
  if (r.status !== 0)
    throw new ControlPlaneError(`go build of the Go echoperator failed: ${r.stderr.trim().split('\n').slice(-15).join('\n')}`);
  renameSync(partial, out);
  return out;
}

/** The Go chart's CRDs (its crds/, equal to the source's manifests/crds/), as YAML texts. */
export function goChartCrds(): string[] {
  return ['echo.yml', 'scheduledecho.yml'].map((f) => git(CHART_MIRROR, ['show', `${CHART_REVISION}:charts/echoperator/crds/${f}`]));
}

/** The Go chart's ClusterRole for HA off, as its templates/rbac/clusterrole.yaml renders it, plus finalizers. */
export function goClusterRole(): object {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: GO_RELEASE, labels: GO_CHART_LABELS },
    rules: [
      { apiGroups: ['mmontes.io'], resources: ['echos', 'scheduledechos'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch', 'create'] },
      { apiGroups: ['batch'], resources: ['cronjobs'], verbs: ['get', 'list', 'watch', 'create', 'update'] },
      // Not in the chart. Its Jobs' owner references set blockOwnerDeletion (metav1.NewControllerRef),
      // which the OwnerReferencesPermissionEnforcement admission plugin (on here, and in OpenShift)
      // allows only with update on the owner's finalizers: without it every create is refused
      // (measured: "cannot set blockOwnerDeletion ..."), and the Go operator gives up after 3 tries.
      { apiGroups: ['mmontes.io'], resources: ['echos/finalizers', 'scheduledechos/finalizers'], verbs: ['update'] },
    ],
  };
}

/**
 * Installs what the Go chart installs for the process to act as its ServiceAccount: CRDs
 * (`kubectl create`, as Helm creates crds/), the ServiceAccount, ClusterRole and binding in
 * `namespace`. Returns a kubeconfig file holding a token of that ServiceAccount.
 */
export function installGoChartRbac(k: Kubectl, namespace: string, dir: string): string {
  for (const crd of goChartCrds()) k.ok(['create', '--field-manager=helm', '-f', '-'], { input: crd });
  k.ok(['wait', '--for=condition=Established', '--timeout=60s', 'crd/echos.mmontes.io', 'crd/scheduledechos.mmontes.io']);
  const objects = [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: GO_RELEASE, namespace, labels: GO_CHART_LABELS } },
    goClusterRole(),
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: GO_RELEASE, labels: GO_CHART_LABELS },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: GO_RELEASE },
      subjects: [{ kind: 'ServiceAccount', name: GO_RELEASE, namespace }],
    },
  ];
  k.ok(['create', '--field-manager=helm', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }) });
  const token = k.ok(['create', 'token', GO_RELEASE, '-n', namespace, '--duration=2h']).trim();
  const admin = k.json<{ clusters: { cluster: Record<string, unknown> }[] }>(['config', 'view', '--raw', '--minify', '--flatten']);
  const path = join(dir, 'go-echoperator.kubeconfig');
  const config = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: admin.clusters[0]!.cluster }],
    users: [{ name: 'go', user: { token } }],
    contexts: [{ name: 'go', context: { cluster: 'c', user: 'go', namespace } }],
    'current-context': 'go',
  };
  // A token: readable by this user only.
  writeFileSync(path, stringify(config), { mode: 0o600 });
  return path;
}

/** The labels the Go chart's _helpers.tpl gives every object of release `echoperator` (chart 0.0.1). */
const GO_CHART_LABELS = {
  'helm.sh/chart': 'echoperator-0.0.1',
  'app.kubernetes.io/name': 'echoperator',
  'app.kubernetes.io/instance': GO_RELEASE,
  'app.kubernetes.io/version': '0.0.1',
  'app.kubernetes.io/managed-by': 'Helm',
};

/**
 * The Go chart's workload for its default values with HA off: its ConfigMap, Deployment and
 * metrics Service, created as Helm 3 creates them (field manager `helm`), then the Deployment
 * scaled to 0 (`kubectl scale`), the first safe step of a switch. The process itself runs on the
 * host (startGoEchoperator); these objects are here for what an install of ours does to them.
 */
export function installGoChartWorkload(k: Kubectl, namespace: string): void {
  const selector = { 'app.kubernetes.io/name': 'echoperator', 'app.kubernetes.io/instance': GO_RELEASE };
  const meta = { name: GO_RELEASE, namespace, labels: GO_CHART_LABELS };
  const objects = [
    {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: meta,
      data: {
        NAMESPACE: namespace,
        NUM_WORKERS: '4',
        HA_ENABLED: 'false',
        METRICS_ENABLED: 'true',
        METRICS_PATH: '/metrics',
        METRICS_PORT: '2112',
        ENV: 'production',
        LOG_LEVEL: 'info',
      },
    },
    {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta,
      spec: {
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: selector },
          spec: {
            serviceAccountName: GO_RELEASE,
            containers: [
              {
                name: GO_RELEASE,
                image: 'mmontes11/echoperator:v0.0.1',
                imagePullPolicy: 'IfNotPresent',
                envFrom: [{ configMapRef: { name: GO_RELEASE } }],
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { ...meta, name: `${GO_RELEASE}-metrics` },
      spec: { type: 'ClusterIP', ports: [{ port: 2112, name: 'metrics' }], selector },
    },
  ];
  k.ok(['create', '--field-manager=helm', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }) });
  k.ok(['scale', 'deployment', GO_RELEASE, '-n', namespace, '--replicas=0']);
}

/**
 * `helm uninstall` of the Go chart's release: every object its templates made (crds/ stay, as
 * Helm never deletes them). Returns what was deleted.
 */
export function uninstallGoChart(k: Kubectl, namespace: string): string {
  return k.ok([
    'delete',
    '-n',
    namespace,
    `deployment/${GO_RELEASE}`,
    `configmap/${GO_RELEASE}`,
    `service/${GO_RELEASE}-metrics`,
    `serviceaccount/${GO_RELEASE}`,
    `clusterrole/${GO_RELEASE}`,
    `clusterrolebinding/${GO_RELEASE}`,
    '--ignore-not-found',
  ]);
}

export interface GoProcess {
  child: ChildProcess;
  logFile: string;
  /** SIGTERM, then the exit code (or the signal) once it has exited. */
  stop(): Promise<string>;
}

/**
 * Runs the binary with the environment its chart's ConfigMap gives it for HA off (NAMESPACE the
 * release namespace, NUM_WORKERS 4, ENV production, LOG_LEVEL info; metrics off here, as nothing
 * scrapes them), plus KUBECONFIG, which its main.go reads for running outside a cluster.
 */
export function startGoEchoperator(binary: string, kubeconfig: string, namespace: string, logFile: string): GoProcess {
  const log = createWriteStream(logFile);
  const child = spawn(binary, [], {
    env: {
      PATH: process.env.PATH,
      KUBECONFIG: kubeconfig,
      NAMESPACE: namespace,
      NUM_WORKERS: '4',
      HA_ENABLED: 'false',
      METRICS_ENABLED: 'false',
      ENV: 'production',
      LOG_LEVEL: 'debug',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout.pipe(log);
  child.stderr.pipe(log);
  const exited = new Promise<string>((resolve) =>
    child.once('exit', (code, signal) => resolve(code !== null ? `exit ${code}` : `${signal}`)),
  );
  return {
    child,
    logFile,
    stop: async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}
