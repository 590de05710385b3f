/**
 * GitOps for real, on a cluster of the test's own with a node: Flux's source-controller and
 * kustomize-controller (built from the Go module proxy, run as processes by
 * scripts/testbed/controlplane/gitops.ts) sync a config repository served over smart HTTP on loopback,
 * holding the synthesized install as a user keeps it: the CRDs in one folder (a Kustomization
 * with prune off), the install in another, and an Echo beside them.
 *
 * What it proves:
 * - a commit is applied; the operator runs as a pod, and the Echo's pod prints; the Echos'
 *   Kustomization, which depends on the CRDs only, becomes Ready only once the Echo is (kstatus
 *   reads the Echo's Ready/Reconciling conditions and observedGeneration): at no observation is
 *   it Ready while the Echo is not;
 * - the one HA switch, committed, rolls out 3 replicas with a Lease; switched off, the PDB and
 *   the Lease Role(Binding) are pruned and every other object is as before (the ones HA does not
 *   touch keep their resourceVersion);
 * - a second reconcile of the same revision changes nothing (server-side apply, no drift);
 * - a Deployment deleted by hand is restored by the next reconcile, unprompted;
 * - a Kustomization holding a ScheduledEcho the operator can never make right (schedule 61)
 *   fails at once, naming it (the operator says Stalled; kstatus reads Failed), instead of
 *   waiting out its 5-minute timeout; the fixed schedule makes it Ready;
 * - stopping the cluster stops Flux and the git server too: no process names its folder.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import type { KubeObject } from '../../src/kube/object.js';
import { createRepository, FLUX_NAMESPACE, startGitOps } from '../../scripts/testbed/controlplane/gitops.js';
import { nodeLeftovers } from '../../scripts/testbed/controlplane/node/node.js';
import { processesMentioning } from '../../scripts/testbed/controlplane/process.js';
import { loadOperatorImage } from '../../scripts/testbed/operator-image.js';
import { crdName } from '../../src/api/crd.js';
import { CUSTOM_RESOURCES } from '../../src/controllers/index.js';
import { startPrivateControlPlane, type Kubectl } from '../support/faults.js';
import { conditionOf as condition, eventually, itemsOf } from '../support/kube.js';
import {
  commitAndPush,
  git,
  gitRepositoryObject,
  kustomization,
  kustomizationObject,
  readyAt,
  requestReconcile,
  stopAfterTest,
} from '../support/flux.js';
import { addOnsReady } from '../support/addons.js';

// Built in the background by npm test while other files run: wait for it here, outside any test's timeout.
await addOnsReady(import.meta.url);

const NS = 'echoperator';
/** Where the config repository keeps each Kustomization's manifests. */
const PATHS = {
  crds: 'clusters/local/echoperator-crds',
  install: 'clusters/local/echoperator',
  apps: 'clusters/local/apps',
  schedules: 'clusters/local/schedules',
};

/** `npm run synth` with HA as given, its two files copied into the repository's two folders. */
function synthInto(work: string, ha: boolean): void {
  const out = mkdtempSync(join(tmpdir(), 'echoperator-synth-'));
  try {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'infra/main.ts'], {
      encoding: 'utf8',
      env: { ...process.env, CDK8S_OUTDIR: out, ECHOPERATOR_HA: String(ha) },
    });
    assert.equal(r.status, 0, r.stderr);
    for (const [file, folder] of [
      ['echoperator-crds.k8s.yaml', PATHS.crds],
      ['echoperator.k8s.yaml', PATHS.install],
    ] as const) {
      mkdirSync(join(work, folder), { recursive: true });
      copyFileSync(join(out, file), join(work, folder, file));
    }
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

function fluxObjects(url: string): string {
  const items = [
    gitRepositoryObject(url),
    kustomizationObject('echoperator-crds', PATHS.crds, false, []),
    // A short interval: the test waits for a reconcile it does not request to restore a deleted Deployment.
    kustomizationObject('echoperator', PATHS.install, true, ['echoperator-crds'], '30s'),
    // Depends on the CRDs only, not on the operator: its Ready comes from the Echo's health alone.
    kustomizationObject('apps', PATHS.apps, true, ['echoperator-crds']),
  ];
  return JSON.stringify({ apiVersion: 'v1', kind: 'List', items });
}

const APPS = `apiVersion: v1
kind: Namespace
metadata:
  name: team-a
  labels:
    pod-security.kubernetes.io/enforce: restricted
---
apiVersion: mmontes.io/v1alpha1
kind: Echo
metadata:
  name: hello
  namespace: team-a
spec:
  message: "Hola, 世界!"
`;

/** The objects a Kustomization applied (its inventory), as kubectl names them. */
function inventory(k: Kubectl, name: string): string[] {
  return (kustomization(k, name).status?.inventory?.entries ?? [])
    .map((e) => {
      const [namespace, objName, group, kind] = e.id.split('_');
      return `${kind}${group ? `.${group}` : ''}/${objName}${namespace ? ` -n ${namespace}` : ''}`;
    })
    .sort();
}

/** kind/name -> the object (as the server has it), for everything the install's Kustomization applied. */
function installObjects(k: Kubectl): Map<string, KubeObject> {
  const objects = new Map<string, KubeObject>();
  for (const id of inventory(k, 'echoperator')) {
    const [ref, , namespace] = id.split(' ');
    objects.set(id, k.json<KubeObject>(['get', ref!, ...(namespace ? ['-n', namespace] : [])]));
  }
  return objects;
}

/**
 * What the install's manifests say of an object, as stored: everything but server-kept metadata
 * and status (a Deployment's revision annotation counts its rollouts).
 */
function content(obj: KubeObject & { status?: unknown }): Record<string, unknown> {
  const { metadata, status: _status, ...rest } = obj;
  const { 'deployment.kubernetes.io/revision': _revision, ...annotations } = metadata!.annotations ?? {};
  return { name: metadata!.name, namespace: metadata!.namespace, labels: metadata!.labels, annotations, ...rest };
}

/**
 * Waits for the next whole second and returns it (ms): Events carry whole-second timestamps. (The
 * timer is the condition itself, the wall clock reaching that second, not a guess at other work.)
 */
async function nextSecond(): Promise<number> {
  await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000)));
  return Math.floor(Date.now() / 1000) * 1000;
}

/** The messages of the change Events (objects created, configured, deleted) Flux recorded on a Kustomization since a time. */
function changeEvents(k: Kubectl, sinceMs: number, name = 'echoperator'): string[] {
  // The timestamps as on the wire (RFC 3339 text, or null), which client-node's CoreV1Event calls Dates.
  const events = itemsOf<{ lastTimestamp: string | null; eventTime: string | null; message: string }>(k, [
    'get',
    'events',
    '-n',
    FLUX_NAMESPACE,
    '--field-selector',
    `involvedObject.name=${name}`,
  ]);
  return events
    .filter((e) => Date.parse(e.lastTimestamp ?? e.eventTime ?? '') >= sinceMs && /\b(created|configured|deleted)\b/.test(e.message))
    .map((e) => e.message);
}

/** kustomize-controller's account of each server-side apply of a Kustomization since a time: object -> action. */
function applyReports(clusterDir: string, name: string, sinceMs: number): Record<string, string>[] {
  return readFileSync(join(clusterDir, 'logs', 'kustomize-controller.log'), 'utf8')
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { ts: string; msg: string; name?: string; output: Record<string, string> })
    .filter((e) => e.msg === 'server-side apply completed' && e.name === name && Date.parse(e.ts) >= sinceMs)
    .map((e) => e.output);
}

function readyOperatorPods(k: Kubectl): V1Pod[] {
  const pods = itemsOf<V1Pod>(k, ['get', 'pods', '-n', NS, '-l', 'app.kubernetes.io/name=echoperator']);
  return pods.filter((p) => !p.metadata!.deletionTimestamp && condition(p, 'Ready')?.status === 'True');
}

test(
  'Flux syncs the synthesized install from a local git repository: health-checked Echo, HA on and off, no drift, self-healing',
  { timeout: 900_000 },
  async (t) => {
    const cp = await startPrivateControlPlane({ node: true });
    const finish = stopAfterTest(t, cp);
    const k = cp.kubectl;
    await loadOperatorImage(cp.state);
    const gitops = await startGitOps(cp.state, { log: (l) => t.diagnostic(l) });
    const url = createRepository(gitops, 'cluster-config');
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\//, 'the git server is on loopback');
    assert.match(gitops.storageUrl, /^http:\/\/127\.0\.0\.1:\d+$/, 'the artifact server is on loopback');
    const work = mkdtempSync(join(tmpdir(), 'echoperator-config-'));
    t.after(() => rmSync(work, { recursive: true, force: true }));
    git(work, ['clone', '--quiet', url, '.']);

    // Flux is told about the repository first, as a bootstrap does; then the user commits.
    k.ok(['apply', '--server-side', '-f', '-'], { input: fluxObjects(url) });
    synthInto(work, false);
    mkdirSync(join(work, PATHS.apps), { recursive: true });
    writeFileSync(join(work, PATHS.apps, 'hello.yaml'), APPS);
    const committed = Date.now();
    const first = commitAndPush(work, 'echoperator, CRDs apart, and an Echo');
    requestReconcile(k, 'gitrepository', 'cluster-config');

    // Watch the order of things: the Echos' Kustomization must never be Ready before the Echo is.
    let operatorReady: number | undefined;
    let echoReady: number | undefined;
    for (;;) {
      assert.ok(Date.now() - committed < 300_000, 'the commit was not synced within 5 minutes');
      const apps = readyAt(k, 'apps', first);
      const got = k.run(['get', 'echo', 'hello', '-n', 'team-a', '-o', 'json']);
      const echo = got.code === 0 ? (JSON.parse(got.stdout) as Echo) : undefined;
      const echoIsReady = condition(echo, 'Ready')?.status === 'True';
      if (apps) assert.ok(echoIsReady, `the apps Kustomization is Ready while the Echo is not: ${JSON.stringify(echo?.status)}`);
      if (echoIsReady) echoReady ??= Date.now();
      if (!operatorReady && readyOperatorPods(k).length === 1) operatorReady = Date.now();
      if (apps && readyAt(k, 'echoperator', first)) break;
      await new Promise((r) => setTimeout(r, 500));
    }
    const echo = k.json<Echo>(['get', 'echo', 'hello', '-n', 'team-a']);
    assert.equal(k.ok(['logs', `job/${echo.status!.jobName!}`, '-n', 'team-a']), 'Hola, 世界!\n');
    assert.equal(echo.status!.observedGeneration, echo.metadata.generation);
    t.diagnostic(
      `commit -> operator pod Ready: ${operatorReady! - committed} ms; -> the Echo's message printed (Echo Ready): ${echoReady! - committed} ms`,
    );
    assert.deepEqual(
      inventory(k, 'echoperator-crds'),
      CUSTOM_RESOURCES.map((kind) => `CustomResourceDefinition.apiextensions.k8s.io/${crdName(kind)}`).sort(),
    );
    assert.equal(kustomization(k, 'echoperator-crds').spec.prune, false);

    // HA on: the one value, re-synthesized and committed.
    const before = installObjects(k);
    synthInto(work, true);
    const haOn = commitAndPush(work, 'echoperator: HA on');
    requestReconcile(k, 'gitrepository', 'cluster-config');
    await eventually('the HA revision applied and healthy', () => readyAt(k, 'echoperator', haOn), 300_000, 1000);
    const deployment = k.json<V1Deployment>(['get', 'deployment', NS, '-n', NS]);
    assert.equal(deployment.spec!.replicas, 3);
    assert.equal(deployment.status!.readyReplicas, 3);
    const pods = readyOperatorPods(k).map((p) => p.metadata!.name);
    const holder = await eventually('a leader among the replicas', () => {
      const h = k.run(['get', 'lease', 'echoperator', '-n', NS, '-o', 'jsonpath={.spec.holderIdentity}']).stdout.trim();
      return pods.includes(h) && h;
    });
    t.diagnostic(`HA on: 3 Ready replicas, ${holder} holds the Lease`);
    k.ok(['get', 'pdb/echoperator', 'role/echoperator-leader-election', 'rolebinding/echoperator-leader-election', '-n', NS]);

    // HA off again: the PDB and the Lease RBAC are pruned, everything else is as it was.
    synthInto(work, false);
    const haOffPushed = await nextSecond();
    const haOff = commitAndPush(work, 'echoperator: HA off');
    requestReconcile(k, 'gitrepository', 'cluster-config');
    await eventually('the HA-off revision applied and healthy', () => readyAt(k, 'echoperator', haOff), 300_000, 1000);
    for (const gone of ['pdb/echoperator', 'role/echoperator-leader-election', 'rolebinding/echoperator-leader-election']) {
      assert.match(k.run(['get', gone, '-n', NS]).stderr, /NotFound/, `${gone} was pruned`);
    }
    const after = installObjects(k);
    assert.deepEqual([...after.keys()], [...before.keys()], 'the same objects as before HA');
    for (const [id, obj] of after) {
      assert.deepEqual(content(obj), content(before.get(id)!), `${id} is as before HA`);
      if (!/^(Deployment|ConfigMap)/.test(id)) {
        assert.equal(obj.metadata!.resourceVersion, before.get(id)!.metadata!.resourceVersion, `${id} was not written`);
      }
    }
    await eventually(
      'one Ready replica',
      () => readyOperatorPods(k).length === 1 && itemsOf<V1Pod>(k, ['get', 'pods', '-n', NS]).length === 1,
      120_000,
    );

    // A second reconcile of the same revision: nothing to apply (server-side apply, no drift).
    const settled = installObjects(k);
    const since = await nextSecond();
    const token = requestReconcile(k, 'kustomization', 'echoperator');
    await eventually(
      'the requested reconcile',
      () => kustomization(k, 'echoperator').status?.lastHandledReconcileAt === token,
      120_000,
      500,
    );
    assert.ok(readyAt(k, 'echoperator', haOff));
    for (const [id, obj] of installObjects(k)) {
      assert.equal(
        obj.metadata!.resourceVersion,
        settled.get(id)!.metadata!.resourceVersion,
        `${id} changed on a reconcile of the same revision`,
      );
    }
    // What Flux reports: its log lists every object of the apply as unchanged, and it records no
    // change Event (it records one per apply that changed something, as the HA-off one did).
    const reports = applyReports(cp.state.dir, 'echoperator', since);
    assert.ok(reports.length > 0, 'the requested reconcile was logged');
    for (const output of reports)
      assert.deepEqual(
        Object.entries(output).filter(([, action]) => action !== 'unchanged'),
        [],
      );
    assert.ok(changeEvents(k, haOffPushed).some((m) => /PodDisruptionBudget\/echoperator\/echoperator deleted/.test(m)));
    assert.deepEqual(changeEvents(k, since), [], 'Flux recorded changes on a reconcile with no drift');

    // The Deployment deleted by hand: the next scheduled reconcile (interval 30s) puts it back.
    const uid = k.json<V1Deployment>(['get', 'deployment', NS, '-n', NS]).metadata!.uid;
    k.ok(['delete', 'deployment', NS, '-n', NS, '--wait=true']);
    const restored = await eventually(
      'Flux to restore the Deployment',
      () => {
        const r = k.run(['get', 'deployment', NS, '-n', NS, '-o', 'json']);
        const d = r.code === 0 ? (JSON.parse(r.stdout) as V1Deployment) : undefined;
        return d && d.metadata!.uid !== uid && d;
      },
      120_000,
      1000,
    );
    assert.deepEqual(content(restored).spec, content(settled.get(`Deployment.apps/${NS} -n ${NS}`)!).spec);
    k.ok(['rollout', 'status', `deployment/${NS}`, '-n', NS, '--timeout=120s']);

    // A ScheduledEcho whose schedule the server refuses (minute 61): its Kustomization fails at
    // once, naming it, instead of waiting out its 5-minute timeout; a fixed schedule makes it Ready.
    const scheduled = (schedule: string) =>
      `apiVersion: mmontes.io/v1alpha1\nkind: ScheduledEcho\nmetadata:\n  name: tick\n  namespace: team-a\nspec:\n  message: tick\n  schedule: "${schedule}"\n`;
    mkdirSync(join(work, PATHS.schedules), { recursive: true });
    writeFileSync(join(work, PATHS.schedules, 'tick.yaml'), scheduled('61 * * * *'));
    const broken = commitAndPush(work, 'a ScheduledEcho with minute 61');
    k.ok(['apply', '--server-side', '-f', '-'], {
      input: JSON.stringify(kustomizationObject('schedules', PATHS.schedules, true, ['apps'])),
    });
    requestReconcile(k, 'gitrepository', 'cluster-config');
    // Well within the timeout: a Kustomization that waited for it would say "timeout waiting for".
    const failed = await eventually(
      'the schedules Kustomization to fail on the stalled ScheduledEcho',
      () => {
        const ready = condition(kustomization(k, 'schedules'), 'Ready');
        return ready?.status === 'False' && ready.reason === 'HealthCheckFailed' && ready;
      },
      150_000,
      1000,
    );
    t.diagnostic(`Flux: ${failed.reason}: ${failed.message}`);
    assert.match(failed.message, /failed early due to stalled resources: \[ScheduledEcho\/team-a\/tick status: 'Failed'\]/);
    assert.equal(kustomization(k, 'schedules').status!.lastAttemptedRevision, broken);
    writeFileSync(join(work, PATHS.schedules, 'tick.yaml'), scheduled('1 * * * *'));
    const fixed = commitAndPush(work, 'minute 1');
    requestReconcile(k, 'gitrepository', 'cluster-config');
    await eventually('the schedules Kustomization Ready with the fixed schedule', () => readyAt(k, 'schedules', fixed), 150_000, 1000);

    // Stopping the cluster stops Flux and the git server with it.
    finish();
    await cp.stop();
    assert.deepEqual(processesMentioning(cp.state.dir), []);
    assert.deepEqual(nodeLeftovers(cp.state.dir), []);
  },
);
