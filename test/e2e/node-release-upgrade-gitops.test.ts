/**
 * An upgrade from the first release to this one by Flux, on a cluster of the test's own with a
 * real node: the config repository holds 0.1.0's crds.yaml and install.yaml (rebuilt from its
 * recorded commit, test/support/upgrade.ts), each in its own folder and Kustomization (the CRDs'
 * with pruning off, as docs/gitops.md says); Echos are printed; then a commit replaces both files
 * with this release's. Once both Kustomizations are Ready at that commit the Echo CRD has the
 * Completed column; every Echo, Job, pod and CronJob is the same object, none printed again;
 * storedVersions unchanged; the operator runs the new image.
 */
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { createRepository, startGitOps } from '../../scripts/testbed/controlplane/gitops.js';
import type { ReleaseFolder } from '../../scripts/ship/release/rebuild.js';
import { commitAndPush, git, gitRepositoryObject, kustomizationObject, readyAt, requestReconcile, stopAfterTest } from '../support/flux.js';
import { eventually } from '../support/kube.js';
import { addOnsReady } from '../support/addons.js';
import { crdColumns, NEW_COLUMN, nothingPrintedAgain, operatorRuns, seedEchos, upgradeBed } from '../support/upgrade.js';

// Built in the background by npm test while other files run: wait for it here, outside any test's timeout.
await addOnsReady(import.meta.url);

const PATHS = { crds: 'clusters/local/echoperator-crds', install: 'clusters/local/echoperator' };

/** A release's two files into the repository's two folders. */
function releaseInto(work: string, r: ReleaseFolder): void {
  for (const [file, folder] of [
    [r.crds, PATHS.crds],
    [r.install, PATHS.install],
  ] as const) {
    mkdirSync(join(work, folder), { recursive: true });
    copyFileSync(file, join(work, folder, file === r.crds ? 'crds.yaml' : 'install.yaml'));
  }
}

test('Flux syncs the next release over the first: CRDs upgraded, Echos kept, none printed again', { timeout: 1_200_000 }, async (t) => {
  let finish = (): void => {};
  const { from, to, cp, k } = await upgradeBed(t, (cp) => {
    finish = stopAfterTest(t, cp);
  });
  const gitops = await startGitOps(cp.state, { log: (l) => t.diagnostic(l) });
  const url = createRepository(gitops, 'cluster-config');
  const work = mkdtempSync(join(tmpdir(), 'echoperator-config-'));
  t.after(() => rmSync(work, { recursive: true, force: true }));
  git(work, ['clone', '--quiet', url, '.']);
  const items = [
    gitRepositoryObject(url),
    kustomizationObject('echoperator-crds', PATHS.crds, false, []),
    kustomizationObject('echoperator', PATHS.install, true, ['echoperator-crds']),
  ];
  k.ok(['apply', '--server-side', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });

  const synced = async (revision: string): Promise<void> => {
    requestReconcile(k, 'gitrepository', 'cluster-config');
    await eventually(
      `both Kustomizations Ready at ${revision}`,
      () => readyAt(k, 'echoperator-crds', revision) && readyAt(k, 'echoperator', revision),
      300_000,
      1000,
    );
  };

  releaseInto(work, from);
  await synced(commitAndPush(work, `echoperator ${from.version}`));
  await operatorRuns(k, from.digest);
  assert.ok(!crdColumns(k).includes(NEW_COLUMN));
  const seeded = await seedEchos(k);

  releaseInto(work, to);
  await synced(commitAndPush(work, `echoperator ${to.version}`));
  assert.ok(crdColumns(k).includes(NEW_COLUMN), `the Echo CRD has ${to.version}'s ${NEW_COLUMN} column`);
  const after = await nothingPrintedAgain(k, seeded, to, 'after-upgrade');
  t.diagnostic(`after the upgrade: ${Object.keys(after.jobs).length} Jobs, the same ${Object.keys(seeded.jobs).length} and the new Echo's`);
  finish();
});
