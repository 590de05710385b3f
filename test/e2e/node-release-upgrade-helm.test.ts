/**
 * An upgrade from the first release to this one by Helm alone, on a cluster of the test's own with
 * a real node, as a user of 0.1.0 meets it: 0.1.0's chart, rebuilt from its recorded commit
 * (test/support/upgrade.ts), installed with `helm install`, Echos printed; then this release's chart.
 *  - A plain `helm upgrade` is refused, naming the CRDs' missing ownership (0.1.0 installed them from
 *    crds/, which carries none), and changes nothing: the release stays at revision 1.
 *  - `helm upgrade --take-ownership` (no kubectl step) upgrades the CRDs (the Echo CRD gets the
 *    Completed column, Helm's keep annotation and the release's ownership) and the operator;
 *    every Echo, Job, pod and CronJob is the same object, none printed again; storedVersions unchanged.
 *  - `helm rollback` to revision 1 (0.1.0) runs 0.1.0's operator again; the CRDs, annotated keep,
 *    are not deleted (0.1.0's manifest has none): they stay as 0.2.0 made them, Completed column
 *    included, and 0.1.0's operator works with them; nothing printed again.
 *  - A later `helm upgrade` needs no flag: the CRDs carry the release's ownership.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { test } from 'node:test';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { ensureHelm } from '../../scripts/ship/helm/tool.js';
import { addOnsReady } from '../support/addons.js';
import { CRDS, crdColumns, ECHO_CRD, NEW_COLUMN, NS, nothingPrintedAgain, seedEchos, upgradeBed } from '../support/upgrade.js';

// Built in the background by npm test while other files run: wait for it here, outside any test's timeout.
await addOnsReady(import.meta.url);

const RELEASE = 'echoperator';

test(
  'helm upgrade from the first release: CRDs upgraded, Echos kept, none printed again; rollback keeps the CRDs',
  { timeout: 1_200_000 },
  async (t) => {
    const helmBinary = await ensureHelm((line) => t.diagnostic(line));
    const { from, to, cp, k } = await upgradeBed(t);
    const helm = (args: string[]) =>
      spawnSync(helmBinary, [...args, '--kubeconfig', cp.state.kubeconfig], { encoding: 'utf8', timeout: 420_000 });
    const helmOk = (args: string[]): string => {
      const r = helm(args);
      assert.equal(r.status, 0, `helm ${args.join(' ')}: ${r.stderr}${r.stdout}`);
      return r.stdout;
    };
    const revisions = () =>
      (JSON.parse(helmOk(['history', RELEASE, '-n', NS, '-o', 'json'])) as { revision: number; status: string; chart: string }[]).map(
        (h) => `${h.revision} ${h.chart} ${h.status}`,
      );

    helmOk(['install', RELEASE, from.chart, '-n', NS, '--create-namespace', '--wait', '--timeout', '5m']);
    assert.ok(!crdColumns(k).includes(NEW_COLUMN), `${from.version}'s CRD has no ${NEW_COLUMN} column`);
    const seeded = await seedEchos(k);

    // A plain upgrade: refused before anything is written, naming the ownership Helm misses.
    const plain = helm(['upgrade', RELEASE, to.chart, '-n', NS, '--wait', '--timeout', '5m']);
    assert.notEqual(plain.status, 0, 'a plain helm upgrade adopted CRDs it did not own');
    assert.match(
      plain.stderr,
      /CustomResourceDefinition "(echos|scheduledechos)\.mmontes\.io" .*exists and cannot be imported into the current release: invalid ownership metadata/,
    );
    t.diagnostic(`plain helm upgrade: ${plain.stderr.trim().split('\n')[0]}`);
    assert.deepEqual(revisions(), [`1 echoperator-${from.version} deployed`]);
    assert.ok(!crdColumns(k).includes(NEW_COLUMN), 'the refused upgrade changed the CRD');

    // With --take-ownership: the one upgrade step, no kubectl.
    helmOk(['upgrade', RELEASE, to.chart, '-n', NS, '--take-ownership', '--wait', '--timeout', '5m']);
    assert.ok(crdColumns(k).includes(NEW_COLUMN), `the Echo CRD has ${to.version}'s ${NEW_COLUMN} column`);
    for (const crd of CRDS) {
      const meta = k.json<V1CustomResourceDefinition>(['get', 'crd', crd]).metadata!;
      assert.equal(meta.annotations?.['helm.sh/resource-policy'], 'keep', `${crd} is kept`);
      assert.equal(meta.annotations?.['meta.helm.sh/release-name'], RELEASE, `${crd} belongs to the release`);
      assert.equal(meta.labels?.['app.kubernetes.io/managed-by'], 'Helm');
    }
    const upgraded = await nothingPrintedAgain(k, seeded, to, 'after-upgrade');
    t.diagnostic(
      `after the upgrade: ${Object.keys(upgraded.jobs).length} Jobs, the same ${Object.keys(seeded.jobs).length} and the new Echo's`,
    );

    // Rollback to 0.1.0: its manifest has no CRDs, and keep stops Helm deleting them.
    helmOk(['rollback', RELEASE, '1', '-n', NS, '--wait', '--timeout', '5m']);
    for (const crd of CRDS) k.ok(['get', 'crd', crd]);
    assert.ok(crdColumns(k).includes(NEW_COLUMN), `the rollback leaves the CRDs as ${to.version} made them`);
    assert.equal(k.json<V1CustomResourceDefinition>(['get', 'crd', ECHO_CRD]).metadata!.annotations?.['helm.sh/resource-policy'], 'keep');
    const rolledBack = await nothingPrintedAgain(k, upgraded, from, 'after-rollback');

    // Forward again: the CRDs carry the release's ownership now, so no flag is needed.
    helmOk(['upgrade', RELEASE, to.chart, '-n', NS, '--wait', '--timeout', '5m']);
    await nothingPrintedAgain(k, rolledBack, to, 'forward-again');
    assert.deepEqual(revisions(), [
      `1 echoperator-${from.version} superseded`,
      `2 echoperator-${to.version} superseded`,
      `3 echoperator-${from.version} superseded`,
      `4 echoperator-${to.version} deployed`,
    ]);
  },
);
