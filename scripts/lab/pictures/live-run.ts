/**
 * A monitored install on a local cluster with a node, and the workload an on-call engineer's
 * dashboard is drawn from: shared by the live test (test/e2e/node-monitoring.test.ts) and the
 * pictures (scripts/lab/pictures/pictures.ts), so both see the same run.
 *
 * startMonitoredRun() installs the operator as a user does (synthesized, applied; HA with two
 * replicas and short lease timings; metrics served with a certificate from metrics.certSecret),
 * gives a `prometheus` ServiceAccount the metrics-reader ClusterRole and the right to discover the
 * metrics Service's endpoints, and starts Debian's Prometheus in the node's network namespace with
 * the plain scrape config of docs/monitoring.md (infra/monitoring/scrape-config.ts) and the rules
 * given. Every step waits on a condition with a deadline. stop() stops Prometheus (the cluster is
 * the caller's); each timestamp of what the run did is kept in `marks`.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { V1Lease, V1Pod } from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { synthesize } from '../../../infra/chart.js';
import { metricsServiceDns, plainScrapeConfig } from '../../../infra/monitoring/scrape-config.js';
import { resolveEchoperatorProps, type EchoperatorProps, type ResolvedEchoperatorProps } from '../../../infra/props.js';
import { selfSignedCertificate } from '../../../src/observability/selfsigned.js';
import type { ControlPlaneState } from '../../testbed/controlplane/cluster.js';
import { NO_PODS_ANNOTATIONS } from '../../testbed/controlplane/network.js';
import { eventually } from '../../testbed/eventually.js';
import type { Kubectl } from '../../testbed/kubectl.js';
import { endpointSliceFileSd } from './discovery.js';
import { startPrometheus, type Prometheus } from './prometheus.js';

export const MONITORED_NAMESPACE = 'echoperator';
const CERT_SECRET = 'echoperator-metrics-tls';
const SCRAPER = 'prometheus';
/** Scrapes and rule evaluations this often: a run of a few minutes still has many points. */
export const SCRAPE_SECONDS = 2;

/** The install under watch: HA with short lease timings, so failovers happen within seconds. */
export const MONITORED_PROPS: EchoperatorProps = {
  namespace: MONITORED_NAMESPACE,
  ha: { enabled: true, replicas: 2, leaseDurationSeconds: 6, renewDeadlineSeconds: 4, retryPeriodSeconds: 1 },
  metrics: { certSecret: CERT_SECRET },
};

/** Something the run did, at a time (unix seconds). */
export interface Mark {
  what: string;
  at: number;
}

export interface MonitoredRunOptions {
  state: ControlPlaneState;
  kubectl: Kubectl;
  /** A folder of the caller's (certificates, tokens, Prometheus' config and data). */
  dir: string;
  /** The rules Prometheus evaluates, from the resolved props (a test shortens their `for:`). */
  rules?: (r: ResolvedEchoperatorProps) => { groups: unknown[] };
  log: (line: string) => void;
}

export interface MonitoredRun {
  r: ResolvedEchoperatorProps;
  prometheus: Prometheus;
  marks: Mark[];
  mark(what: string): Mark;
  /** The Lease's holder (a pod's name), or '' when none holds it. */
  leader(): string;
  /** The operator's pods that are Ready, by name. */
  readyPods(): string[];
  /** Sets the Deployment's replicas; with n > 0, waits until n pods are Ready and scraped up. */
  scale(n: number): Promise<void>;
  /** Waits until `n` targets of the operator are up in Prometheus, and no other. */
  scrapedUp(n: number, timeoutMs?: number): Promise<void>;
  /** Creates `count` Echos (pods kept off the node) and `onNode` more whose Jobs the node runs; waits until each has its Job. */
  echos(count: number, onNode: number): Promise<void>;
  /** Deletes a pod and waits until the Deployment is whole again (Ready and scraped) and a leader holds the Lease. */
  deletePod(name: string): Promise<void>;
  stop(): Promise<void>;
}

const now = (): number => Date.now() / 1000;

/**
 * What a Prometheus in another namespace needs to discover a Service's endpoints in `namespace`
 * (role endpointslice: the slices, their Services and pods): a Role and its RoleBinding, both
 * named `<serviceAccount>-discovery`. kube-prometheus grants the same per watched namespace.
 */
export function grantEndpointDiscovery(k: Kubectl, namespace: string, serviceAccount: string): void {
  const name = `${serviceAccount}-discovery`;
  k.ok(['create', 'role', name, '-n', namespace, '--verb=get,list,watch', '--resource=endpointslices.discovery.k8s.io,services,pods']);
  k.ok(['create', 'rolebinding', name, '-n', namespace, `--role=${name}`, `--serviceaccount=${namespace}:${serviceAccount}`]);
}

export async function startMonitoredRun(o: MonitoredRunOptions): Promise<MonitoredRun> {
  const k = o.kubectl;
  const NS = MONITORED_NAMESPACE;
  const r = resolveEchoperatorProps(MONITORED_PROPS);
  const { yaml, echoperator } = synthesize(MONITORED_PROPS);
  const manifests = join(o.dir, 'echoperator.k8s.yaml');
  writeFileSync(manifests, yaml);
  k.ok(['apply', '--server-side', '-f', manifests]);

  // The metrics certificate, as cert-manager would write it: the Service's DNS name.
  const dns = metricsServiceDns(r);
  const cert = selfSignedCertificate({ hosts: [dns, `${dns}.cluster.local`], commonName: dns });
  const certFile = join(o.dir, 'metrics-ca.crt');
  writeFileSync(certFile, cert.cert);
  writeFileSync(join(o.dir, 'tls.key'), cert.key, { mode: 0o600 });
  k.ok(['create', 'secret', 'tls', CERT_SECRET, '-n', NS, `--cert=${certFile}`, `--key=${join(o.dir, 'tls.key')}`]);
  k.ok(['rollout', 'status', `deployment/${r.name}`, '-n', NS, '--timeout=180s'], { timeoutMs: 200_000 });

  // The scraper: metrics-reader, and the right to discover the metrics Service's endpoints.
  k.ok(['create', 'serviceaccount', SCRAPER, '-n', NS]);
  k.ok([
    'create',
    'clusterrolebinding',
    `${SCRAPER}-metrics`,
    `--clusterrole=${echoperator.metricsReaderRoleName!}`,
    `--serviceaccount=${NS}:${SCRAPER}`,
  ]);
  grantEndpointDiscovery(k, NS, SCRAPER);
  await eventually(
    'the scraper to be allowed to read the metrics',
    () => k.run(['auth', 'can-i', 'get', r.metrics.path, `--as=system:serviceaccount:${NS}:${SCRAPER}`]).stdout.trim() === 'yes',
  );
  const tokenFile = join(o.dir, 'scraper.token');
  const token = k.ok(['create', 'token', SCRAPER, '-n', NS, '--duration=2h']).trim();
  writeFileSync(tokenFile, token, { mode: 0o600 });
  // The scraper's discovery, with the scraper's own token: the Role above is all it needs.
  const caData = k.ok(['config', 'view', '--raw', '--minify', '-o', 'jsonpath={.clusters[0].cluster.certificate-authority-data}']);
  const scraperKubeconfig = join(o.dir, 'scraper.kubeconfig');
  writeFileSync(
    scraperKubeconfig,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'c', cluster: { server: o.state.server, 'certificate-authority-data': caData } }],
      users: [{ name: SCRAPER, user: { token } }],
      contexts: [{ name: 'c', context: { cluster: 'c', user: SCRAPER } }],
      'current-context': 'c',
    }),
    { mode: 0o600 },
  );
  const targetsFile = join(o.dir, 'targets.json');
  const discovery = endpointSliceFileSd({ kubeconfig: scraperKubeconfig, namespace: NS, file: targetsFile, log: o.log });

  const { kubernetes_sd_configs: _kubernetesSd, ...scrape } = plainScrapeConfig(r, {
    tokenFile,
    caFile: certFile,
    scrapeInterval: `${SCRAPE_SECONDS}s`,
  });
  const prometheus = await startPrometheus({
    netns: o.state.node!.netns,
    dir: o.dir,
    config: {
      global: { scrape_interval: `${SCRAPE_SECONDS}s`, scrape_timeout: `${SCRAPE_SECONDS}s`, evaluation_interval: '1s' },
      // Debian's Prometheus has no kubernetes SD: the stand-in writes its targets, meta labels and all.
      scrape_configs: [{ ...scrape, file_sd_configs: [{ files: [targetsFile] }] }],
    },
    rules: o.rules?.(r),
  });
  const marks: Mark[] = [];
  const mark = (what: string): Mark => {
    const m = { what, at: now() };
    marks.push(m);
    o.log(`${new Date(m.at * 1000).toISOString()} ${what}`);
    return m;
  };
  const job = `${r.name}-metrics`;

  const leader = (): string => k.json<V1Lease>(['get', 'lease', r.ha.leaseName, '-n', NS]).spec?.holderIdentity ?? '';
  const pods = (): V1Pod[] => k.json<{ items: V1Pod[] }>(['get', 'pods', '-n', NS, '-l', `app.kubernetes.io/instance=${r.name}`]).items;
  const readyPods = (): string[] =>
    pods()
      .filter((p) => !p.metadata?.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'))
      .map((p) => p.metadata!.name!);

  const scrapedUp = async (n: number, timeoutMs = 120_000): Promise<void> => {
    await eventually(
      `${n} operator targets up in Prometheus`,
      () => {
        const mine = prometheus.targets().filter((t) => t.labels.job === job);
        const up = mine.filter((t) => t.health === 'up');
        if (up.length === n && mine.length === n) return true;
        throw new Error(`targets: ${JSON.stringify(mine.map((t) => [t.labels.pod, t.health, t.lastError]))}`);
      },
      timeoutMs,
      1_000,
    );
  };

  const whole = async (): Promise<void> => {
    const want = r.ha.replicas;
    await eventually(
      `${want} Ready operator pods and a leader among them`,
      () => {
        const pods = readyPods();
        const holder = leader();
        if (pods.length === want && pods.includes(holder)) return true;
        throw new Error(`ready pods ${JSON.stringify(pods)}, lease holder ${JSON.stringify(holder)}`);
      },
      180_000,
      1_000,
    );
    await scrapedUp(want);
  };

  const run: MonitoredRun = {
    r,
    prometheus,
    marks,
    mark,
    leader,
    readyPods,
    scrapedUp,
    async scale(n) {
      k.ok(['scale', `deployment/${r.name}`, '-n', NS, `--replicas=${n}`]);
      mark(`scaled to ${n}`);
      if (n === 0) {
        await eventually('no operator pod left', () => pods().length === 0, 120_000, 1_000);
        return;
      }
      await whole();
    },
    async echos(count, onNode) {
      const names = (prefix: string, n: number): string[] => Array.from({ length: n }, (_, i) => `${prefix}-${String(i).padStart(4, '0')}`);
      const batches: [string, string[], Record<string, string>][] = [
        ['load', names('echo', count), { ...NO_PODS_ANNOTATIONS }],
        ['runs', names('run', onNode), {}],
      ];
      mark(`creating ${count + onNode} Echos`);
      for (const [ns, echoNames, annotations] of batches) {
        k.ok(['create', '-f', '-'], {
          input: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, annotations } }),
        });
        const items = echoNames.map((name) => ({
          apiVersion: 'mmontes.io/v1alpha1',
          kind: 'Echo',
          metadata: { name, namespace: ns },
          spec: { message: `Hola ${name}` },
        }));
        k.ok(['create', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }), timeoutMs: 120_000 });
      }
      await eventually(
        `each of the ${count + onNode} Echos to have its Job`,
        () => {
          const echos = k.json<{ items: { status?: { jobName?: string } }[] }>(['get', 'echos', '-A']).items;
          const done = echos.filter((e) => e.status?.jobName).length;
          if (done === count + onNode) return true;
          throw new Error(`${done} of ${count + onNode} have their Job`);
        },
        240_000,
        2_000,
      );
      mark(`each Echo has its Job`);
    },
    async deletePod(name) {
      const wasLeader = name === leader();
      k.ok(['delete', 'pod', name, '-n', NS, '--wait=false']);
      mark(`deleted pod ${name}${wasLeader ? ' (the leader)' : ''}`);
      await whole();
    },
    async stop() {
      await discovery.stop();
      await prometheus.stop();
    },
  };
  await whole();
  mark('installed, 2 replicas scraped');
  return run;
}
