/**
 * An upgrade from the first release to this one with the release files alone, on a cluster of the
 * test's own with a real node: 0.1.0's crds.yaml and install.yaml (rebuilt from its recorded
 * commit, test/support/upgrade.ts) applied server-side, Echos printed; then this release's two
 * files applied the same way, as the README's Upgrade says. The Echo CRD gets the Completed
 * column; every Echo, Job, pod and CronJob is the same object, none printed again; storedVersions
 * unchanged; the operator runs the new image.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { addOnsReady } from '../support/addons.js';
import { crdColumns, NEW_COLUMN, nothingPrintedAgain, operatorRuns, seedEchos, upgradeBed } from '../support/upgrade.js';

// Built in the background by npm test while other files run: wait for it here, outside any test's timeout.
await addOnsReady(import.meta.url);

test(
  'kubectl apply --server-side of the next release over the first: CRDs upgraded, Echos kept, none printed again',
  { timeout: 900_000 },
  async (t) => {
    const { from, to, k } = await upgradeBed(t);

    k.ok(['apply', '--server-side', '-f', from.crds, '-f', from.install]);
    await operatorRuns(k, from.digest);
    assert.ok(!crdColumns(k).includes(NEW_COLUMN));
    const seeded = await seedEchos(k);

    k.ok(['apply', '--server-side', '-f', to.crds, '-f', to.install]);
    assert.ok(crdColumns(k).includes(NEW_COLUMN), `the Echo CRD has ${to.version}'s ${NEW_COLUMN} column`);
    const after = await nothingPrintedAgain(k, seeded, to, 'after-upgrade');
    t.diagnostic(
      `after the upgrade: ${Object.keys(after.jobs).length} Jobs, the same ${Object.keys(seeded.jobs).length} and the new Echo's`,
    );
  },
);
