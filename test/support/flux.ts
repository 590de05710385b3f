/**
 * Driving Flux as a user does (test/e2e/*gitops*): commits pushed to the config repository that
 * scripts/testbed/controlplane/gitops.ts serves, `flux reconcile`'s annotation, and the
 * Kustomizations' state read back.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { Condition } from '../../src/api/index.js';
import { FLUX_NAMESPACE } from '../../scripts/testbed/controlplane/gitops.js';
import { logTail } from '../../scripts/testbed/controlplane/process.js';
import type { Kubectl, PrivateControlPlane } from './faults.js';
import { conditionOf as condition } from './kube.js';

export function git(cwd: string, args: string[]): string {
  const r = spawnSync('git', ['-c', 'user.name=Test', '-c', 'user.email=test@example.invalid', ...args], { cwd, encoding: 'utf8' });
  assert.equal(r.status, 0, `git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
}

/** Commits everything and pushes to the served repository; returns the commit's revision as Flux names it. */
export function commitAndPush(work: string, message: string): string {
  git(work, ['add', '-A']);
  git(work, ['commit', '--quiet', '-m', message]);
  git(work, ['push', '--quiet', 'origin', 'HEAD:main']);
  return `main@sha1:${git(work, ['rev-parse', 'HEAD'])}`;
}

/** What `flux reconcile` does: asks a Flux object to reconcile now. Returns the token to wait for. */
export function requestReconcile(k: Kubectl, kind: string, name: string): string {
  const token = new Date().toISOString();
  k.ok(['annotate', '--overwrite', kind, name, '-n', FLUX_NAMESPACE, `reconcile.fluxcd.io/requestedAt=${token}`]);
  return token;
}

/** A Flux Kustomization (kustomize.toolkit.fluxcd.io/v1): the fields the tests read. */
export interface Kustomization {
  spec: { prune: boolean };
  status?: {
    lastAppliedRevision?: string;
    lastAttemptedRevision?: string;
    lastHandledReconcileAt?: string;
    conditions?: Condition[];
    inventory?: { entries?: { id: string }[] };
  };
}

export function kustomization(k: Kubectl, name: string): Kustomization {
  return k.json<Kustomization>(['get', 'kustomization', name, '-n', FLUX_NAMESPACE]);
}

/** The Kustomization has applied `revision` and passed its health checks. */
export function readyAt(k: Kubectl, name: string, revision: string): boolean {
  const ks = kustomization(k, name);
  return ks.status?.lastAppliedRevision === revision && condition(ks, 'Ready')?.status === 'True';
}

/** A Kustomization of the `cluster-config` repository's `path`, waiting for its objects' health. */
export function kustomizationObject(name: string, path: string, prune: boolean, dependsOn: string[], interval = '10m'): object {
  return {
    apiVersion: 'kustomize.toolkit.fluxcd.io/v1',
    kind: 'Kustomization',
    metadata: { name, namespace: FLUX_NAMESPACE },
    spec: {
      interval,
      sourceRef: { kind: 'GitRepository', name: 'cluster-config' },
      path: `./${path}`,
      prune,
      wait: true,
      timeout: '5m',
      ...(dependsOn.length ? { dependsOn: dependsOn.map((d) => ({ name: d })) } : {}),
    },
  };
}

/** The GitRepository `cluster-config` at `url`'s main branch. */
export function gitRepositoryObject(url: string): object {
  return {
    apiVersion: 'source.toolkit.fluxcd.io/v1',
    kind: 'GitRepository',
    metadata: { name: 'cluster-config', namespace: FLUX_NAMESPACE },
    spec: { interval: '10m', url, ref: { branch: 'main' } },
  };
}

/**
 * Stops the cluster after the test, first giving Flux's own account of a failure (each
 * controller's last log lines), before the cluster's folder and its logs go. Call the returned
 * function once the test's last check passed.
 */
export function stopAfterTest(t: TestContext, cp: PrivateControlPlane): () => void {
  let finished = false;
  t.after(async () => {
    if (!finished)
      for (const name of ['source-controller', 'kustomize-controller'])
        t.diagnostic(`${name}:\n  ${logTail(join(cp.state.dir, 'logs', `${name}.log`), 30)}`);
    await cp.stop();
  });
  return () => {
    finished = true;
  };
}
