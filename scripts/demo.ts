/**
 * `npm run demo`: the whole flow on the local control plane, for a newcomer.
 * Brings the control plane up (building it the first time), installs the CRDs, runs the
 * operator from source, applies a hello-world Echo and shows the Job the operator made, then
 * stops the operator and leaves the control plane running for you to explore.
 */
import { spawn, spawnSync } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { exitWithError } from './controlplane/errors.js';
import { acquireControlPlane } from './controlplane/session.js';
import { isRunning, readState, startControlPlane } from './controlplane/cluster.js';
import { defaultClusterDir } from './controlplane/session.js';

const say = (line: string): void => console.log(`\n\x1b[1m==> ${line}\x1b[0m`);

function kubectl(kubeconfig: string, args: string[], input?: string): string {
  const r = spawnSync('kubectl', ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', input });
  if (r.error) throw new Error(`could not run kubectl: ${r.error.message} (install kubectl and put it on PATH)`);
  if (r.status !== 0) throw new Error(`kubectl ${args.join(' ')} failed: ${r.stderr.trim()}`);
  return r.stdout;
}

async function controlPlane(): Promise<string> {
  if (process.env.USE_EXISTING_CLUSTER === 'true') return (await acquireControlPlane()).kubeconfig;
  const dir = defaultClusterDir();
  const state = readState(dir);
  if (state && isRunning(state)) return state.kubeconfig;
  return (await startControlPlane({ dir, detached: true })).kubeconfig;
}

const HELLO = `apiVersion: mmontes.io/v1alpha1
kind: Echo
metadata:
  name: hello-world
  namespace: default
spec:
  message: "Hola, 世界!"
`;

async function main(): Promise<void> {
  say('Control plane (etcd, kube-apiserver, kube-controller-manager)');
  const kubeconfig = await controlPlane();
  console.log(`KUBECONFIG=${kubeconfig}`);

  say('Installing the CRDs (crds/)');
  console.log(kubectl(kubeconfig, ['apply', '--server-side', '--force-conflicts', '-f', 'crds/']).trim());
  kubectl(kubeconfig, ['wait', '--for=condition=Established', 'crd/echos.mmontes.io', 'crd/scheduledechos.mmontes.io']);

  say('Starting the operator (npm start)');
  const operator = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts'], {
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, KUBECONFIG: kubeconfig, LOG_FORMAT: 'text', HEALTH_PORT: '0', METRICS_PORT: '0', NAMESPACE: 'default' },
  });
  const exited = new Promise<number | null>((resolve) => operator.on('exit', (code) => resolve(code)));
  try {
    say('Applying a hello-world Echo');
    process.stdout.write(HELLO);
    kubectl(kubeconfig, ['delete', 'echo', 'hello-world', '-n', 'default', '--ignore-not-found', '--wait=true']);
    kubectl(kubeconfig, ['apply', '-f', '-'], HELLO);

    say('Waiting for the operator to create its Job');
    let job = '';
    for (let i = 0; i < 150 && !job; i++) {
      if (operator.exitCode !== null) throw new Error(`the operator exited with code ${operator.exitCode}`);
      job = kubectl(kubeconfig, ['get', 'jobs', '-n', 'default', '-l', 'mmontes.io/echo=hello-world', '-o', 'name']).trim();
      if (!job) await sleep(200);
    }
    if (!job) throw new Error('no Job appeared within 30 s; see the operator log above');
    await sleep(1000);
    console.log(kubectl(kubeconfig, ['get', 'echos,jobs,pods', '-n', 'default', '-o', 'wide']));
    console.log(kubectl(kubeconfig, ['get', job, '-n', 'default', '-o', "jsonpath={'command: '}{.spec.template.spec.containers[0].command}{'\\n'}"]));
    console.log(
      'This local control plane has no kubelet, so the pod stays Pending here; on a real cluster it\n' +
        'prints the message, the Job completes and the Echo\'s phase becomes Succeeded.',
    );
  } finally {
    say('Stopping the operator');
    operator.kill('SIGTERM');
    await exited;
  }
  say('Done');
  console.log(`The control plane is still running. Explore it with:\n  export KUBECONFIG=${kubeconfig}\n  kubectl get echos -A\nStop it with: npm run cluster:down`);
}

main().catch(exitWithError);
