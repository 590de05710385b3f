/**
 * The fault campaign's programs (scripts/lab/faults/programs/programs.ts) on a private control plane
 * without a node: for ours and both controller-runtime peers (naive, advised), the RBAC a program states is enough
 * to run it as its ServiceAccount (a token of that account, so RBAC is enforced as for the
 * campaign's impersonating proxy), one replica becomes ready, takes the Lease under its replica
 * name, makes an Echo's Job and records it in the Echo's status, and ends when killed; and a mutant builds and becomes ready.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Job, V1Lease } from '@kubernetes/client-node';
import { runCleanups } from '../../scripts/lab/bench/common.js';
import { writeKubeconfig } from '../../scripts/testbed/controlplane/cluster.js';
import { LEASE_NAME, programs, type Program } from '../../scripts/lab/faults/programs/programs.js';
import type { Echo } from '../../src/api/echo.js';
import { eventually } from '../support/eventually.js';
import { echoManifest, startPrivateControlPlane, type PrivateControlPlane } from '../support/faults.js';
import type { KubeList } from '../support/kube.js';

let cp: PrivateControlPlane | undefined;
const byName = new Map<string, Program>();
const tmp = mkdtempSync(join(tmpdir(), 'echoperator-fault-programs-'));
const MUTANT = 'mutant:no-read-your-writes';
const PEERS = ['controller-runtime-naive', 'controller-runtime-advised'];

before(async () => {
  // Built first (cached after the first run), so the control plane is not kept waiting.
  for (const p of await programs(['echoperator', ...PEERS, MUTANT])) byName.set(p.name, p);
  cp = await startPrivateControlPlane({ node: false });
  cp.installCrds();
});

after(async () => {
  await cp?.stop();
  rmSync(tmp, { recursive: true, force: true });
  await runCleanups(); // what the programs made for the run (a copy of the bundle)
});

/** Applies the program's RBAC in a new namespace; returns a kubeconfig holding a token of its ServiceAccount. */
function asServiceAccount(program: Program, namespace: string): string {
  const k = cp!.kubectl;
  k.ok(['create', 'namespace', namespace]);
  const rbac = program.rbac(namespace);
  k.ok(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: rbac.manifests }) });
  const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(rbac.user);
  assert.ok(m, `a ServiceAccount user: ${rbac.user}`);
  assert.equal(m[1], namespace);
  assert.deepEqual(rbac.groups, ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated']);
  const token = k.ok(['create', 'token', m[2]!, '-n', namespace, '--duration=1h']).trim();
  const path = join(tmp, `${namespace}.kubeconfig`);
  writeKubeconfig(path, cp!.state.server, { caCert: readFileSync(join(cp!.state.dir, 'pki', 'ca.crt'), 'utf8') }, { token });
  return path;
}

describe('fault campaign programs', () => {
  for (const name of ['echoperator', ...PEERS]) {
    it(`${name}: ready as its ServiceAccount, leads, makes an Echo's Job, ends when killed`, async () => {
      const program = byName.get(name)!;
      const namespace = `programs-${name}`;
      const kubeconfig = asServiceAccount(program, namespace);
      const p = await program.start({ kubeconfig, replica: 'r0', namespace, leaseNamespace: namespace });
      try {
        await program.ready(p);
        const k = cp!.kubectl;
        await eventually(
          `${name} to hold Lease ${LEASE_NAME} as r0`,
          () => k.json<V1Lease>(['get', 'lease', LEASE_NAME, '-n', namespace]).spec?.holderIdentity === 'r0',
          60_000,
        );
        k.ok(['create', '-n', namespace, '-f', '-'], { input: echoManifest('hello', 'hello from the campaign') });
        const uid = k.json<Echo>(['get', 'echo', 'hello', '-n', namespace]).metadata.uid;
        await eventually(
          `${name} to create the Echo's Job`,
          () =>
            k
              .json<KubeList<V1Job>>(['get', 'jobs', '-n', namespace])
              .items.some((j) => j.metadata?.ownerReferences?.some((r) => r.controller && r.uid === uid)),
          60_000,
        );
        await eventually(
          `${name} to name the Job in the Echo's status`,
          () => Boolean(k.json<Echo>(['get', 'echo', 'hello', '-n', namespace]).status?.jobName),
          60_000,
        );
        assert.doesNotMatch(p.output(), /forbidden/i, 'every request the program made was allowed');
      } finally {
        p.kill();
      }
      assert.deepEqual(await p.exited, { code: null, signal: 'SIGKILL' });
    });
  }

  it(`${MUTANT}: built from a patched HEAD, it becomes ready`, async () => {
    const program = byName.get(MUTANT)!;
    const namespace = 'programs-mutant';
    const p = await program.start({
      kubeconfig: asServiceAccount(program, namespace),
      replica: 'r0',
      namespace,
      leaseNamespace: namespace,
    });
    try {
      await program.ready(p);
    } finally {
      p.kill();
    }
    assert.equal((await p.exited).signal, 'SIGKILL');
  });
});
