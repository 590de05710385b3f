/**
 * ScheduledEcho spec.timeZone on the real control plane: the CronJob gets the zone, a ScheduledEcho
 * without one (the Go echoperator's manifests) keeps Etc/UTC, and an unknown zone is refused at
 * admission by the CRD's CEL rule, naming spec.timeZone and the zone.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { eventually, kubectl, kubectlOk, testNamespace } from '../support/kube.js';
import { installCrds, startOperator, waitReady } from '../support/operator.js';
import { applyScheduledEcho, getCronJob } from '../support/scheduledechos.js';

test('a ScheduledEcho at 0 9 * * * in Europe/Madrid gets a CronJob in Europe/Madrid; without a zone, Etc/UTC', async (t) => {
  installCrds();
  const ns = testNamespace(t, 'sched-tz');
  const op = await startOperator(t, { WATCH_NAMESPACES: ns, NAMESPACE: ns });
  await waitReady(op);

  assert.equal(applyScheduledEcho(ns, 'madrid', { message: 'Buenos días', schedule: '0 9 * * *', timeZone: 'Europe/Madrid' }).code, 0);
  const cj = await eventually('the CronJob', () => getCronJob(ns, 'madrid'));
  assert.equal(cj.spec?.schedule, '0 9 * * *');
  assert.equal(cj.spec.timeZone, 'Europe/Madrid');
  assert.match(kubectlOk(['get', 'scheduledecho', 'madrid'], { namespace: ns }), /TIMEZONE[\s\S]*Europe\/Madrid/);

  // The Go echoperator's manifest: no timeZone, the CronJob in UTC as before.
  assert.equal(applyScheduledEcho(ns, 'go', { message: 'Hola, 世界!', schedule: '*/1 * * * *' }).code, 0);
  assert.equal((await eventually('the Go-style CronJob', () => getCronJob(ns, 'go'))).spec?.timeZone, 'Etc/UTC');

  // A zone the CronJob API reads with its own rules (a link name with '+'), and back to unset.
  assert.equal(applyScheduledEcho(ns, 'madrid', { message: 'Buenos días', schedule: '0 9 * * *', timeZone: 'Etc/GMT+5' }).code, 0);
  await eventually('Etc/GMT+5 on the CronJob', () => getCronJob(ns, 'madrid')?.spec?.timeZone === 'Etc/GMT+5');
  assert.equal(applyScheduledEcho(ns, 'madrid', { message: 'Buenos días', schedule: '0 9 * * *' }).code, 0);
  await eventually('Etc/UTC again once the zone is removed', () => getCronJob(ns, 'madrid')?.spec?.timeZone === 'Etc/UTC');
});

test('an unknown time zone is refused at admission, naming spec.timeZone and the zone', (t) => {
  installCrds();
  const ns = testNamespace(t, 'sched-tz-bad');
  const mars = applyScheduledEcho(ns, 'mars', { message: 'x', schedule: '0 9 * * *', timeZone: 'Mars/Olympus' });
  assert.notEqual(mars.code, 0);
  assert.match(mars.stderr, /spec\.timeZone: Invalid value: .*unknown time zone Mars\/Olympus/);
  for (const zone of ['+01:00', 'Local', '../etc/localtime', '']) {
    const r = applyScheduledEcho(ns, 'bad', { message: 'x', schedule: '0 9 * * *', timeZone: zone });
    assert.notEqual(r.code, 0, zone);
    assert.match(
      r.stderr,
      new RegExp(
        `spec\\.timeZone: Invalid value: .*unknown time zone ${zone.replace(/[.+]/g, '\\$&')}: must be a name from the IANA time zone database`,
      ),
      zone,
    );
  }
  assert.equal(kubectl(['get', 'scheduledecho', 'mars'], { namespace: ns }).code, 1, 'nothing was stored');
});
