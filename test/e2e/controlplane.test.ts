/**
 * The local control plane is a real one: CRDs work, RBAC is enforced, the version is the pinned
 * one, and the tooling leaves no process behind.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { test } from 'node:test';
import { join } from 'node:path';
import { eventually } from '../support/eventually.js';
import type { VersionInfo } from '@kubernetes/client-node';
import { kubernetesVersion } from '../../scripts/testbed/controlplane/assets.js';
import { kubectlFor } from '../../scripts/testbed/kubectl.js';
import { installCrds } from '../support/operator.js';
import { currentKubeconfig, kubectl, kubectlOk, onLocalControlPlane, testNamespace } from '../support/kube.js';
import { getEcho } from '../support/runs.js';
import { scratchDir } from '../support/scratch.js';

test('a CRD is applied and a custom resource is created and read back through kubectl', (t) => {
  installCrds();
  const ns = testNamespace(t, 'crd');
  kubectlOk(['apply', '-f', '-'], {
    namespace: ns,
    input: 'apiVersion: mmontes.io/v1alpha1\nkind: Echo\nmetadata:\n  name: hello\nspec:\n  message: "Hola, 世界!"\n',
  });
  const echo = getEcho(ns, 'hello');
  assert.equal(echo.kind, 'Echo');
  assert.equal(echo.spec.message, 'Hola, 世界!');
  const byShortName = kubectlOk(['get', 'ec', '-o', 'name'], { namespace: ns });
  assert.equal(byShortName.trim(), 'echo.mmontes.io/hello');
});

test('a ServiceAccount without any RBAC grant gets 403', (t) => {
  const ns = testNamespace(t, 'rbac');
  kubectlOk(['create', 'serviceaccount', 'nobody'], { namespace: ns });
  const token = kubectlOk(['create', 'token', 'nobody', '--duration=10m'], { namespace: ns }).trim();
  // A kubeconfig holding only the token: the admin client certificate must not ride along.
  const raw = kubectlFor(tokenKubeconfig(token)).run(['get', '--raw', `/api/v1/namespaces/${ns}/configmaps`]);
  assert.notEqual(raw.code, 0, 'the request must be refused');
  assert.match(raw.stderr, /forbidden|Forbidden/);
  assert.match(raw.stderr, new RegExp(`system:serviceaccount:${ns}:nobody`));
});

test(
  '/version reports the Kubernetes version KUBERNETES_VERSION selects (default: the newest)',
  { skip: !onLocalControlPlane() && 'USE_EXISTING_CLUSTER' },
  () => {
    const version = JSON.parse(kubectlOk(['get', '--raw', '/version'])) as VersionInfo;
    assert.equal(version.gitVersion, kubernetesVersion());
  },
);

test('PodSecurity admission enforces the restricted profile', (t) => {
  const ns = testNamespace(t, 'psa', { 'pod-security.kubernetes.io/enforce': 'restricted' });
  const r = kubectl(['run', 'privileged', '--image=busybox', '--restart=Never', '--privileged'], { namespace: ns });
  assert.notEqual(r.code, 0);
  assert.match(r.stderr, /violates PodSecurity "restricted/);
});

test('cluster exec tears down the control plane it started, on exit and on SIGTERM', { timeout: 180_000 }, async () => {
  if (!onLocalControlPlane()) return;
  for (const how of ['exit', 'SIGTERM'] as const) {
    // The child prints the PIDs it was given, then either exits or waits to be terminated.
    const script = `console.log('PIDS=' + process.env.ECHOPERATOR_CONTROL_PLANE_PIDS); ${how === 'exit' ? 'setTimeout(() => {}, 3000);' : 'setInterval(() => {}, 1000);'}`;
    const child = spawn(
      process.execPath,
      ['--import', 'tsx', 'scripts/testbed/cluster.ts', 'exec', '--private', '--', process.execPath, '-e', script],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, KUBECONFIG: '', ECHOPERATOR_NODE: 'false' },
      },
    );
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const pids = await new Promise<number[]>((resolve, reject) => {
      const timer = setInterval(() => {
        const m = /PIDS=([\d,]+)/.exec(out);
        if (m) {
          clearInterval(timer);
          resolve(m[1]!.split(',').map(Number));
        }
      }, 100);
      child.on('close', (code) => {
        clearInterval(timer);
        const m = /PIDS=([\d,]+)/.exec(out);
        if (m) resolve(m[1]!.split(',').map(Number));
        else reject(new Error(`cluster exec ended (${code}) before printing PIDs:\n${err}`));
      });
    });
    assert.equal(pids.length, 3, 'etcd, kube-apiserver and kube-controller-manager');
    assert.ok(pids.every(alive), 'the control plane runs while the command does');
    if (how === 'SIGTERM') child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve(null) : child.on('close', resolve)));
    await eventually(
      `no process of the control plane to survive (${how})`,
      () => {
        assert.deepEqual(pids.filter(alive), [], `no process of the control plane survives (${how})`);
        return true;
      },
      5_000,
      100,
    );
  }
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

function tokenKubeconfig(token: string): string {
  const { cluster } = currentKubeconfig();
  // A token is a secret: its kubeconfig goes with this file's tests.
  const path = join(scratchDir('sa-kubeconfig'), 'kubeconfig');
  const yaml = JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster }],
    users: [{ name: 'sa', user: { token } }],
    contexts: [{ name: 'c', context: { cluster: 'c', user: 'sa' } }],
    'current-context': 'c',
  });
  writeFileSync(path, yaml, { mode: 0o600 });
  return path;
}
