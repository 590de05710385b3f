/**
 * What the upgrade tests share (test/e2e/node-release-upgrade-*.test.ts): the two releases, the
 * first rebuilt from its recorded commit by its own `npm run release` (scripts/ship/release/
 * rebuild.ts) and this tree's; both images on the test's node; Echos and a ScheduledEcho made and
 * printed under the old release; and what must hold after an upgrade: the Echo CRD as the new
 * release has it (its Completed column), storedVersions unchanged, the operator running the new
 * image, and every Echo, Job, pod and CronJob the same object as before (UIDs): nothing printed
 * again. "Nothing printed again" is read once the new operator has printed an Echo made after the
 * upgrade, so it has listed and reconciled the old ones by then (its informers sync before its
 * workers start, and the old keys are queued first).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import type { V1CronJob, V1CustomResourceDefinition, V1Job, V1Pod } from '@kubernetes/client-node';
import type { Echo } from '../../src/api/echo.js';
import { rebuildRelease, releaseFolder, type ReleaseFolder } from '../../scripts/ship/release/rebuild.js';
import { release } from '../../scripts/ship/release/release.js';
import { RELEASES } from '../../scripts/ship/release/versions.js';
import { startPrivateControlPlane, type Kubectl, type PrivateControlPlane } from './faults.js';
import { importReleaseImage } from './release-image.js';
import { printedBy } from './echo-printed.js';
import { conditionOf, eventually, itemsOf } from './kube.js';

/** The operator's namespace in every route (the release's install.yaml, the chart's -n). */
export const NS = 'echoperator';
/** Where the test's Echos live. */
export const TEAM = 'team-a';
export const ECHO_CRD = 'echos.mmontes.io';
export const CRDS = [ECHO_CRD, 'scheduledechos.mmontes.io'];
/** The column the next version adds to the Echo CRD: the CRD change the upgrade must bring. */
export const NEW_COLUMN = 'Completed';

export interface Releases {
  /** The first release, rebuilt from its commit. */
  from: ReleaseFolder;
  /** This tree's release. */
  to: ReleaseFolder;
}

/** The newest released version rebuilt from its commit, and this tree's release, in scratch folders removed after the test. */
export async function upgradeReleases(t: TestContext): Promise<Releases> {
  const log = (line: string): void => t.diagnostic(line);
  const from = await rebuildRelease(RELEASES.at(-1)!.version, log);
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-release-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const made = await release(dir, log, { inputs: 'development' });
  const to = releaseFolder(dir, made.provenance.version);
  assert.notEqual(to.version, from.version, 'this tree is a new version');
  assert.notEqual(to.digest, from.digest);
  t.diagnostic(`upgrade from ${from.version} (${from.digest}) to ${to.version} (${to.digest})`);
  return { from, to };
}

/** What an upgrade test runs on: both releases, a cluster of its own with a node, both images on it. */
export interface UpgradeBed extends Releases {
  cp: PrivateControlPlane;
  k: Kubectl;
}

/**
 * The releases (upgradeReleases), then a cluster with a node holding both images. `stopAfter`
 * arranges the cluster's stop after the test (default: stop it).
 */
export async function upgradeBed(
  t: TestContext,
  stopAfter: (cp: PrivateControlPlane) => void = (cp) => t.after(() => cp.stop()),
): Promise<UpgradeBed> {
  const releases = await upgradeReleases(t);
  const cp = await startPrivateControlPlane({ node: true });
  stopAfter(cp);
  for (const r of [releases.from, releases.to]) importReleaseImage(cp, r.archive);
  return { ...releases, cp, k: cp.kubectl };
}

/** The printer columns of a CRD, by name. */
export function crdColumns(k: Kubectl, crd = ECHO_CRD): string[] {
  return k.json<V1CustomResourceDefinition>(['get', 'crd', crd]).spec.versions[0]!.additionalPrinterColumns!.map((c) => c.name);
}

/** What an upgrade must leave as it was. */
export interface Snapshot {
  /** namespace/name -> uid, for Echos, Jobs, pods, CronJobs. */
  echos: Record<string, string>;
  jobs: Record<string, string>;
  pods: Record<string, string>;
  cronJobs: Record<string, string>;
  /** Each Echo's Job and completion time. */
  runs: Record<string, string>;
  storedVersions: Record<string, string[]>;
}

const byName = (objects: { metadata?: { name?: string; uid?: string } }[]): Record<string, string> =>
  Object.fromEntries(objects.map((o) => [o.metadata!.name!, o.metadata!.uid!]));

export function snapshot(k: Kubectl): Snapshot {
  const echos = itemsOf<Echo>(k, ['get', 'echos', '-n', TEAM]);
  return {
    echos: byName(echos),
    jobs: byName(itemsOf<V1Job>(k, ['get', 'jobs', '-n', TEAM])),
    pods: byName(itemsOf<V1Pod>(k, ['get', 'pods', '-n', TEAM])),
    cronJobs: byName(itemsOf<V1CronJob>(k, ['get', 'cronjobs', '-n', TEAM])),
    runs: Object.fromEntries(echos.map((e) => [e.metadata.name!, `${e.status?.jobName} at ${e.status?.completionTime}`])),
    storedVersions: Object.fromEntries(
      CRDS.map((crd) => [crd, k.json<V1CustomResourceDefinition>(['get', 'crd', crd]).status!.storedVersions!]),
    ),
  };
}

function applyTeamObject(k: Kubectl, object: Record<string, unknown>): void {
  k.ok(['apply', '-n', TEAM, '-f', '-'], { input: JSON.stringify({ apiVersion: 'mmontes.io/v1alpha1', ...object }) });
}

/** An Echo printing `message`, made now; resolves once its Job printed it, exactly. */
export async function echoPrints(k: Kubectl, name: string, message: string): Promise<void> {
  applyTeamObject(k, { kind: 'Echo', metadata: { name }, spec: { message } });
  assert.equal(await printedBy(k, TEAM, name), `${message}\n`);
}

/**
 * Under the old release: two Echos printed, and a ScheduledEcho whose CronJob (once a year) will
 * not fire during the test. Returns what must stay.
 */
export async function seedEchos(k: Kubectl): Promise<Snapshot> {
  k.ok(['create', 'namespace', TEAM]);
  k.ok(['label', 'namespace', TEAM, 'pod-security.kubernetes.io/enforce=restricted']);
  await echoPrints(k, 'hello', 'Hola before the upgrade');
  await echoPrints(k, 'again', 'printed once only');
  applyTeamObject(k, { kind: 'ScheduledEcho', metadata: { name: 'yearly' }, spec: { message: 'happy new year', schedule: '0 0 1 1 *' } });
  await eventually('the ScheduledEcho Ready with its CronJob', () => {
    const got = k.json<{ status?: { conditions?: { type: string; status: string }[] } }>(['get', 'scheduledecho', 'yearly', '-n', TEAM]);
    return conditionOf(got, 'Ready')?.status === 'True' && itemsOf<V1CronJob>(k, ['get', 'cronjobs', '-n', TEAM]).length === 1;
  });
  const seeded = snapshot(k);
  assert.equal(Object.keys(seeded.jobs).length, 2);
  assert.deepEqual(Object.values(seeded.storedVersions), [['v1alpha1'], ['v1alpha1']]);
  return seeded;
}

/** Waits until the operator's Deployment has rolled out, its one Ready pod running the image of `digest`. */
export async function operatorRuns(k: Kubectl, digest: string): Promise<void> {
  const rollout = k.run(['rollout', 'status', 'deployment/echoperator', '-n', NS, '--timeout=240s'], { timeoutMs: 270_000 });
  assert.equal(rollout.code, 0, `${rollout.stdout}${rollout.stderr}`);
  await eventually(
    `one Ready operator pod of ${digest}`,
    () => {
      const pods = itemsOf<V1Pod>(k, ['get', 'pods', '-n', NS, '-l', 'app.kubernetes.io/name=echoperator']);
      const status = pods.length === 1 ? pods[0]!.status?.containerStatuses?.[0] : undefined;
      return !!status?.ready && status.imageID.endsWith(digest);
    },
    120_000,
  );
}

/**
 * After a move from one release to another (upgrade or rollback): the operator runs `now`'s
 * image; a new Echo prints (the operator works, and has reconciled the old ones); every object of
 * `before` is the same object, no Job, pod or CronJob was added but the new Echo's, and
 * storedVersions are as they were.
 */
export async function nothingPrintedAgain(k: Kubectl, before: Snapshot, now: ReleaseFolder, newEcho: string): Promise<Snapshot> {
  await operatorRuns(k, now.digest);
  await echoPrints(k, newEcho, `Hola from ${now.version}`);
  const after = snapshot(k);
  const without = (map: Record<string, string>, prefix: string): Record<string, string> =>
    Object.fromEntries(Object.entries(map).filter(([name]) => !name.startsWith(prefix)));
  assert.deepEqual(without(after.echos, newEcho), before.echos, 'the same Echos');
  assert.deepEqual(without(after.runs, newEcho), before.runs, "each Echo's Job and completion time as they were");
  assert.deepEqual(without(after.jobs, newEcho), before.jobs, 'the same Jobs, none made again');
  assert.deepEqual(without(after.pods, newEcho), before.pods, 'the same pods, none run again');
  assert.deepEqual(after.cronJobs, before.cronJobs, 'the same CronJob');
  assert.equal(Object.keys(after.jobs).length, Object.keys(before.jobs).length + 1, "one Job more: the new Echo's");
  assert.deepEqual(after.storedVersions, before.storedVersions, 'storedVersions unchanged');
  return after;
}
