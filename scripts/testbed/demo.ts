/**
 * `npm run demo`: the product working, for a newcomer, on the local cluster.
 *
 * Brings the cluster up (building it the first time): the control plane and a real node. Installs
 * the operator the way a user does (`npm run synth`, then `kubectl apply --server-side -f
 * dist/manifests/`), with its image built from the bundle and loaded into the node. Applies a
 * hello-world Echo and shows what its pod printed (`kubectl logs`) and the Echo's phase, then a
 * ScheduledEcho, waits for its CronJob to fire, and shows what that pod printed. Leaves the
 * cluster and the operator running to explore.
 *
 * Without a node (ECHOPERATOR_NODE=false, or USE_EXISTING_CLUSTER=true where the operator's
 * image is not loaded) the operator runs from source instead, and pods print where a node runs them.
 */
import type { V1Job } from '@kubernetes/client-node';
import { spawn, spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { OUTDIR } from '../../infra/chart.js';
import { API_VERSION, crdName } from '../../src/api/index.js';
import { ECHOS } from '../../src/api/echo.js';
import { SCHEDULED_ECHOS } from '../../src/api/scheduledecho.js';
import { ECHO_LABEL } from '../../src/controllers/echo/desired.js';
import { CUSTOM_RESOURCES } from '../../src/controllers/index.js';
import { isRunning, readState, startControlPlane, wantNode, type ControlPlaneState } from './controlplane/cluster.js';
import { exitWithError } from '../ship/errors.js';
import { acquireControlPlane, defaultClusterDir } from './controlplane/session.js';
import { kubectlFor } from './kubectl.js';
import { loadOperatorImage } from './operator-image.js';

const say = (line: string): void => console.log(`\n\x1b[1m==> ${line}\x1b[0m`);

/** Deadline of one kubectl call: longer than the longest wait it is asked for (rollout status, 180 s). */
const KUBECTL_TIMEOUT_MS = 300_000;
const kubectl = (kubeconfig: string, args: string[], input?: string): string =>
  kubectlFor(kubeconfig, { timeoutMs: KUBECTL_TIMEOUT_MS }).ok(args, { input });

/** The local cluster (started or reused), or undefined with USE_EXISTING_CLUSTER=true. */
async function localCluster(): Promise<ControlPlaneState | undefined> {
  if (process.env.USE_EXISTING_CLUSTER === 'true') return undefined;
  const dir = defaultClusterDir();
  const state = readState(dir);
  if (state && isRunning(state)) return state;
  return startControlPlane({ dir, detached: true, node: wantNode() });
}

async function waitFor<T>(what: string, timeoutMs: number, probe: () => T | undefined | false): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(500);
  }
}

const HELLO = `apiVersion: ${API_VERSION}
kind: ${ECHOS.kind}
metadata:
  name: hello-world
  namespace: default
spec:
  message: "Hola, 世界!"
`;

const EVERY_MINUTE = `apiVersion: ${API_VERSION}
kind: ${SCHEDULED_ECHOS.kind}
metadata:
  name: hello-every-minute
  namespace: default
spec:
  message: "Hola, 世界! (on schedule)"
  schedule: "*/1 * * * *"
`;

/** Installs the operator in the cluster as a user would; it stays running. */
async function installInCluster(kubeconfig: string, state: ControlPlaneState): Promise<void> {
  say('Loading the operator image into the node (the Dockerfile layout, built from the bundle)');
  console.log(await loadOperatorImage(state));
  say(`npm run synth  ->  ${OUTDIR}/`);
  const synth = spawnSync(process.execPath, ['--import', 'tsx', 'infra/main.ts'], { stdio: 'inherit' });
  if (synth.status !== 0) throw new Error('npm run synth failed');
  say(`kubectl apply --server-side -f ${OUTDIR}/`);
  console.log(kubectl(kubeconfig, ['apply', '--server-side', '-f', `${OUTDIR}/`]).trim());
  kubectl(kubeconfig, ['rollout', 'status', 'deployment/echoperator', '-n', 'echoperator', '--timeout=180s']);
  console.log(kubectl(kubeconfig, ['get', 'pods', '-n', 'echoperator', '-o', 'wide']).trim());
}

/** Runs the operator from source (no node to run its image); returns how to stop it. */
function runFromSource(kubeconfig: string): () => Promise<void> {
  say('Installing the CRDs (crds/) and starting the operator from source (npm start)');
  kubectl(kubeconfig, ['apply', '--server-side', '--force-conflicts', '-f', 'crds/']);
  kubectl(kubeconfig, ['wait', '--for=condition=Established', ...CUSTOM_RESOURCES.map((k) => `crd/${crdName(k)}`)]);
  const operator = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, KUBECONFIG: kubeconfig, LOG_FORMAT: 'text', HEALTH_PORT: '0', METRICS_PORT: '0', NAMESPACE: 'default' },
  });
  const exited = new Promise<void>((resolve) => operator.on('exit', () => resolve()));
  return async () => {
    say('Stopping the operator');
    operator.kill('SIGTERM');
    await exited;
  };
}

function hasNode(kubeconfig: string): boolean {
  return kubectl(kubeconfig, ['get', 'nodes', '-o', 'name']).trim() !== '';
}

async function main(): Promise<void> {
  say('Cluster: etcd, kube-apiserver, kube-controller-manager, and a node (kube-scheduler, kubelet, containerd, kube-proxy)');
  const state = await localCluster();
  const kubeconfig = state?.kubeconfig ?? (await acquireControlPlane()).kubeconfig;
  console.log(`KUBECONFIG=${kubeconfig}`);
  let stop: (() => Promise<void>) | undefined;
  if (state?.node) await installInCluster(kubeconfig, state);
  else stop = runFromSource(kubeconfig);
  const podsRun = hasNode(kubeconfig);
  try {
    say('Applying a hello-world Echo');
    process.stdout.write(HELLO);
    kubectl(kubeconfig, ['delete', ECHOS.singular, 'hello-world', '-n', 'default', '--ignore-not-found', '--wait=true']);
    kubectl(kubeconfig, ['apply', '-f', '-'], HELLO);
    if (!podsRun) {
      const job = await waitFor('the Job', 30_000, () =>
        kubectl(kubeconfig, ['get', 'jobs', '-n', 'default', '-l', `${ECHO_LABEL}=hello-world`, '-o', 'name']).trim(),
      );
      console.log(kubectl(kubeconfig, ['get', 'echos,jobs', '-n', 'default']));
      console.log(
        `${job} is made; this cluster has no node, so its pod stays Pending (run without ECHOPERATOR_NODE=false to see it print).`,
      );
      return;
    }
    const job = await waitFor('the Echo to succeed', 120_000, () => {
      const phase = kubectl(kubeconfig, [
        'get',
        ECHOS.singular,
        'hello-world',
        '-n',
        'default',
        '-o',
        'jsonpath={.status.phase}/{.status.jobName}',
      ]);
      return phase.startsWith('Succeeded/') && phase.slice('Succeeded/'.length);
    });
    console.log(kubectl(kubeconfig, ['get', ECHOS.resource, '-n', 'default']).trim());
    say(`kubectl logs job/${job}`);
    process.stdout.write(kubectl(kubeconfig, ['logs', `job/${job}`, '-n', 'default']));

    say('Applying a ScheduledEcho (every minute) and waiting for its CronJob to fire');
    process.stdout.write(EVERY_MINUTE);
    kubectl(kubeconfig, ['delete', SCHEDULED_ECHOS.singular, 'hello-every-minute', '-n', 'default', '--ignore-not-found', '--wait=true']);
    kubectl(kubeconfig, ['apply', '-f', '-'], EVERY_MINUTE);
    const run = await waitFor('a scheduled run to complete', 150_000, () => {
      const jobs = (JSON.parse(kubectl(kubeconfig, ['get', 'jobs', '-n', 'default', '-o', 'json'])) as { items: V1Job[] }).items;
      return jobs.find((j) => j.metadata?.ownerReferences?.[0]?.kind === 'CronJob' && j.status?.succeeded === 1)?.metadata?.name;
    });
    console.log(kubectl(kubeconfig, ['get', `${SCHEDULED_ECHOS.resource},cronjobs,jobs`, '-n', 'default']).trim());
    say(`kubectl logs job/${run}`);
    process.stdout.write(kubectl(kubeconfig, ['logs', `job/${run}`, '-n', 'default']));
  } finally {
    await stop?.();
  }
  say('Done');
  console.log(
    `The cluster${state?.node ? ' and the operator are' : ' is'} still running. Explore with:\n` +
      `  export KUBECONFIG=${kubeconfig}\n  kubectl get echos,scheduledechos -A\n  kubectl logs -n echoperator deploy/echoperator\n` +
      'Stop it with: npm run cluster:down',
  );
}

main().catch(exitWithError);
