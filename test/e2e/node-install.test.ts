/**
 * The install as a user makes it, on a cluster of the test's own with a real node: `npm run
 * synth`, then `kubectl apply --server-side -f` the output. The operator runs as a pod of the
 * image the Dockerfile describes (loaded into the node: no registry here), becomes Ready through
 * the kubelet's probes, talks to the API server in-cluster with its projected ServiceAccount
 * token, and its Echos' pods print. HA (the one switch) runs three replicas with one leader,
 * hands over when the leader's pod is deleted, and honours its PodDisruptionBudget; all of it with
 * the default confinement policy on the operator's ServiceAccount. Last, the cluster is stopped
 * and nothing of its node may be left on the machine.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { request } from 'node:https';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { join } from 'node:path';
import { test } from 'node:test';
import type { V1Lease, V1Namespace, V1PodDisruptionBudget, V1Pod, V1ValidatingAdmissionPolicyBinding } from '@kubernetes/client-node';
import type { KubeObject } from '../../src/kube/object.js';
import { nodeLeftovers } from '../../scripts/testbed/controlplane/node/node.js';
import { loadOperatorImage } from '../../scripts/testbed/operator-image.js';
import type { AuditEvent } from '../support/audit.js';
import { startPrivateControlPlane, type Kubectl } from '../support/faults.js';
import { printedBy } from '../support/echo-printed.js';
import { currentKubeconfig, eventually, itemsOf } from '../support/kube.js';

const NS = 'echoperator';

/** `npm run synth` (infra/main.ts) into a folder of its own, with HA as given. */
function synth(ha: boolean): string {
  const out = mkdtempSync(join(tmpdir(), 'echoperator-synth-'));
  const r = spawnSync(process.execPath, ['--import', 'tsx', 'infra/main.ts'], {
    encoding: 'utf8',
    env: { ...process.env, CDK8S_OUTDIR: out, ECHOPERATOR_HA: String(ha) },
  });
  assert.equal(r.status, 0, r.stderr);
  return out;
}

/** name -> resourceVersion of everything the install made, to see that a re-apply changes nothing. */
function versions(k: Kubectl): Record<string, string | undefined> {
  const list = itemsOf<KubeObject>(k, [
    'get',
    'deployment,configmap,serviceaccount,service,role,rolebinding,poddisruptionbudget',
    '-n',
    NS,
  ]);
  const cluster = itemsOf<KubeObject>(k, [
    'get',
    'clusterrole,clusterrolebinding,validatingadmissionpolicy,validatingadmissionpolicybinding,crd',
    '-l',
    'app.kubernetes.io/name=echoperator',
  ]);
  return Object.fromEntries([...list, ...cluster].map((o) => [`${o.kind}/${o.metadata!.name}`, o.metadata!.resourceVersion]));
}

/**
 * versions(), once two reads 2 s apart agree: a rollout's last status writes (the deployment
 * controller counting a replaced pod gone, after the new ones are Ready) would otherwise land
 * between a snapshot and the re-apply it is compared with, and read as a change by the apply.
 */
async function settledVersions(k: Kubectl): Promise<Record<string, string | undefined>> {
  let last: Record<string, string | undefined> | undefined;
  return eventually(
    'the install to stop changing',
    () => {
      const now = versions(k);
      const same = last !== undefined && isDeepStrictEqual(now, last);
      last = now;
      return same && now;
    },
    60_000,
    2_000,
  );
}

function readyOperatorPods(k: Kubectl): V1Pod[] {
  const pods = itemsOf<V1Pod>(k, ['get', 'pods', '-n', NS, '-l', 'app.kubernetes.io/name=echoperator']);
  return pods.filter((p) => !p.metadata!.deletionTimestamp && p.status!.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
}

/**
 * Waits for the operator's Deployment to roll out; when it does not, the error carries what a
 * person would look at next (the pods, their Events, the operator's last log lines), since the
 * private cluster is gone by the time anyone reads the failure.
 */
function rolledOut(k: Kubectl, timeoutSeconds: number): void {
  const r = k.run(['rollout', 'status', 'deployment/echoperator', '-n', NS, `--timeout=${timeoutSeconds}s`], {
    timeoutMs: (timeoutSeconds + 30) * 1000,
  });
  if (r.code === 0) return;
  const look = (args: string[]): string => {
    const out = k.run(args);
    return `$ kubectl ${args.join(' ')}\n${out.stdout}${out.stderr}`;
  };
  assert.fail(
    [
      `the operator's Deployment did not roll out in ${timeoutSeconds} s: ${r.stdout.trim().split('\n').pop()}`,
      look(['get', 'pods', '-n', NS, '-o', 'wide']),
      look(['get', 'events', '-n', NS, '--sort-by=.lastTimestamp']),
      look(['logs', '-n', NS, '-l', 'app.kubernetes.io/name=echoperator', '--tail=20', '--prefix', '--all-containers']),
    ].join('\n'),
  );
}

function echo(k: Kubectl, ns: string, name: string, message: string): void {
  k.ok(['apply', '-f', '-'], {
    namespace: ns,
    input: JSON.stringify({ apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', metadata: { name }, spec: { message } }),
  });
}

function leaseHolder(k: Kubectl): string | undefined {
  const r = k.run(['get', 'lease', 'echoperator', '-n', NS, '-o', 'jsonpath={.spec.holderIdentity}']);
  return r.code === 0 ? r.stdout.trim() || undefined : undefined;
}

/** The kubelet's answer to GET /pods: anonymous, or with a client certificate of the cluster CA. */
function kubeletStatus(port: number, client?: { cert: string; key: string }): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path: '/pods', rejectUnauthorized: false, ...client }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

function evict(k: Kubectl, pod: string): { code: number; stderr: string } {
  const body = JSON.stringify({ apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name: pod, namespace: NS } });
  return k.run(['create', '--raw', `/api/v1/namespaces/${NS}/pods/${pod}/eviction`, '-f', '-'], { input: body });
}

test(
  'npm run synth + kubectl apply --server-side runs the operator as a pod, HA off and on; stopping the cluster leaves nothing of the node',
  { timeout: 600_000 },
  async (t) => {
    const cp = await startPrivateControlPlane({ node: true });
    t.after(() => cp.stop());
    const k = cp.kubectl;
    // The kubelet answers only authenticated, authorized callers (the API server's client
    // certificate, the admin's); anonymous access is off.
    const kubeletPort = cp.state.node!.kubeletPort;
    assert.equal(await kubeletStatus(kubeletPort), 401);
    const admin = currentKubeconfig(cp.state.kubeconfig).user;
    const adminCert = {
      cert: Buffer.from(admin['client-certificate-data']!, 'base64').toString(),
      key: Buffer.from(admin['client-key-data']!, 'base64').toString(),
    };
    assert.equal(await kubeletStatus(kubeletPort, adminCert), 200);
    await loadOperatorImage(cp.state);
    const folders: string[] = [];
    t.after(() => folders.forEach((f) => rmSync(f, { recursive: true, force: true })));

    // HA off: one pod, Ready through the kubelet's probes on /readyz.
    const plain = synth(false);
    folders.push(plain);
    k.ok(['apply', '--server-side', '-f', `${plain}/`]);
    rolledOut(k, 120);
    assert.equal(k.json<V1Namespace>(['get', 'namespace', NS]).metadata!.labels!['pod-security.kubernetes.io/enforce'], 'restricted');
    // The default install confines its ServiceAccount: everything below runs under the policy.
    const policy = k.json<V1ValidatingAdmissionPolicyBinding>(['get', 'validatingadmissionpolicybinding', 'echoperator-confinement']);
    assert.deepEqual(policy.spec.validationActions, ['Deny']);
    const [pod] = await eventually('the operator pod Ready', () => readyOperatorPods(k).length === 1 && readyOperatorPods(k));
    assert.equal(pod!.spec!.containers[0]!.readinessProbe!.httpGet!.path, '/readyz');
    assert.ok(
      pod!.spec!.volumes!.some((v) => v.projected?.sources?.some((s) => s.serviceAccountToken)),
      'a projected ServiceAccount token',
    );
    // Inside the container (kubectl exec through the kubelet): user 65532, and nothing writable at /.
    const inside = k.run([
      'exec',
      '-n',
      NS,
      pod!.metadata!.name!,
      '--',
      'node',
      '-e',
      "console.log(process.getuid(), process.getgid()); try { require('fs').writeFileSync('/probe', 'x') } catch (e) { console.log(e.code) }",
    ]);
    assert.equal(inside.code, 0, inside.stderr);
    assert.equal(inside.stdout.trim(), '65532 65532\nEROFS');

    // It reconciles Echos in other namespaces, as its ServiceAccount, to pods that print.
    k.ok(['create', 'namespace', 'team-a']);
    k.ok(['label', 'namespace', 'team-a', 'pod-security.kubernetes.io/enforce=restricted']);
    echo(k, 'team-a', 'hello', 'Hola, 世界!');
    assert.equal(await printedBy(k, 'team-a', 'hello'), 'Hola, 世界!\n');
    const audit = readFileSync(join(cp.state.dir, 'logs', 'audit.log'), 'utf8')
      .split('\n')
      .filter(Boolean)
      .map((l) => JSON.parse(l) as AuditEvent);
    const jobCreate = audit.find((e) => e.verb === 'create' && e.objectRef?.resource === 'jobs' && e.objectRef?.namespace === 'team-a');
    assert.equal(jobCreate?.user?.username, `system:serviceaccount:${NS}:echoperator`);

    // Re-applying the same manifests changes nothing.
    const before = await settledVersions(k);
    k.ok(['apply', '--server-side', '-f', `${plain}/`]);
    assert.deepEqual(versions(k), before);

    // HA on: three Ready replicas, one leader.
    const ha = synth(true);
    folders.push(ha);
    k.ok(['apply', '--server-side', '-f', `${ha}/`]);
    // Three pods start one after another (maxSurge 1): under a loaded CI machine each takes its time.
    rolledOut(k, 300);
    const replicas = await eventually('3 Ready replicas', () => readyOperatorPods(k).length === 3 && readyOperatorPods(k), 120_000);
    const names = replicas.map((p) => p.metadata!.name);
    const leader = await eventually(
      'a leader among them',
      () => {
        const h = leaseHolder(k);
        return h && names.includes(h) && h;
      },
      60_000,
    );
    const before2 = await settledVersions(k);
    k.ok(['apply', '--server-side', '-f', `${ha}/`]);
    assert.deepEqual(versions(k), before2, 'HA re-apply changes nothing');

    // Deleting the leader's pod (SIGTERM: it releases the Lease) hands over to a standby.
    const lease = k.json<V1Lease>(['get', 'lease', 'echoperator', '-n', NS]).spec!;
    const bound = (lease.leaseDurationSeconds! + 2) * 1000; // lease duration + retry period: even a crash is taken over by then
    const deleted = Date.now();
    k.ok(['delete', 'pod', leader, '-n', NS, '--wait=false']);
    const successor = await eventually(
      'another replica to lead',
      () => {
        const h = leaseHolder(k);
        return h && h !== leader && h;
      },
      bound + 10_000,
    );
    const handover = Date.now() - deleted;
    t.diagnostic(`handover after deleting the leader's pod: ${handover} ms (bound ${bound} ms)`);
    assert.ok(handover <= bound, `handover took ${handover} ms`);
    assert.ok(names.includes(successor), 'a warm standby took over');
    echo(k, 'team-a', 'after-handover', 'still here');
    assert.equal(await printedBy(k, 'team-a', 'after-handover'), 'still here\n');

    // The PodDisruptionBudget (maxUnavailable 1): one eviction is allowed, a second right after is refused.
    await eventually('3 Ready replicas again', () => readyOperatorPods(k).length === 3, 120_000);
    await eventually(
      'the budget to allow one disruption',
      () => k.json<V1PodDisruptionBudget>(['get', 'pdb', 'echoperator', '-n', NS]).status?.disruptionsAllowed === 1,
      60_000,
    );
    const [first, second] = readyOperatorPods(k).map((p) => p.metadata!.name!);
    const allowed = evict(k, first!);
    assert.equal(allowed.code, 0, allowed.stderr);
    const refused = evict(k, second!);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /disruption budget/i);

    // Stopping the cluster removes everything its node made on the machine.
    await cp.stop();
    assert.deepEqual(nodeLeftovers(cp.state.dir), []);
  },
);
