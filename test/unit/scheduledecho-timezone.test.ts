/**
 * ScheduledEcho's spec.timeZone: the CronJob gets it, one without it gets the very CronJob it got
 * before the field existed (so an upgrade writes nothing), and the CRD's admission rule lets every
 * zone name through to the time zone check while refusing offsets, paths and Local.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { SCHEDULED_ECHOS, TIME_ZONE_PATTERN, type ScheduledEcho } from '../../src/api/scheduledecho.js';
import { CRONJOB_TIME_ZONE, desiredCronJob } from '../../src/controllers/scheduledecho/desired.js';

function se(spec: ScheduledEcho['spec']): ScheduledEcho {
  return {
    apiVersion: 'mmontes.io/v1alpha1',
    kind: 'ScheduledEcho',
    metadata: { name: 'tick', namespace: 'ns', uid: 'u-1', generation: 1 },
    spec,
  };
}

describe('ScheduledEcho spec.timeZone', () => {
  it("a ScheduledEcho without it (the Go echoperator's) gets the same CronJob as before: Etc/UTC, same fields, same order", () => {
    const cj = desiredCronJob(se({ message: 'hi', schedule: '0 9 * * *' }), 'busybox:1.37');
    assert.equal(CRONJOB_TIME_ZONE, 'Etc/UTC');
    assert.deepEqual(Object.entries(cj.spec).slice(0, 7), [
      ['schedule', '0 9 * * *'],
      ['timeZone', 'Etc/UTC'],
      ['startingDeadlineSeconds', 300],
      ['suspend', false],
      ['concurrencyPolicy', 'Forbid'],
      ['successfulJobsHistoryLimit', 3],
      ['failedJobsHistoryLimit', 1],
    ]);
    assert.deepEqual(Object.keys(cj.spec), [
      'schedule',
      'timeZone',
      'startingDeadlineSeconds',
      'suspend',
      'concurrencyPolicy',
      'successfulJobsHistoryLimit',
      'failedJobsHistoryLimit',
      'jobTemplate',
    ]);
  });

  it('is passed to the CronJob, and changes nothing else', () => {
    const utc = desiredCronJob(se({ message: 'hi', schedule: '0 9 * * *' }), 'busybox:1.37');
    const madrid = desiredCronJob(se({ message: 'hi', schedule: '0 9 * * *', timeZone: 'Europe/Madrid' }), 'busybox:1.37');
    assert.equal(madrid.spec.timeZone, 'Europe/Madrid');
    assert.equal(JSON.stringify(madrid).replace('Europe/Madrid', 'Etc/UTC'), JSON.stringify(utc));
  });

  it("the CRD's pattern admits every zone Node's ICU knows and refuses offsets, paths, Local and empty names", () => {
    const pattern = new RegExp(TIME_ZONE_PATTERN);
    const zones = [...Intl.supportedValuesOf('timeZone'), 'UTC', 'Etc/UTC', 'Etc/GMT+5', 'America/Argentina/ComodRivadavia'];
    assert.ok(zones.length > 300, `${zones.length} zones`);
    for (const zone of zones) assert.match(zone, pattern);
    for (const bad of [
      '',
      '+01:00',
      'UTC+1:00',
      '../etc/passwd',
      '/etc/localtime',
      'Europe/',
      'Europe//Madrid',
      '-x/y',
      'Europe/Madrid ',
      'America/ThisIsFifteenChr',
    ]) {
      assert.doesNotMatch(bad, pattern, bad);
    }
    const [schema] = [SCHEDULED_ECHOS.schema.properties!.spec!.properties!.timeZone!];
    const [rule] = schema['x-kubernetes-validations']!;
    assert.ok(rule!.rule.includes(`self.matches('${TIME_ZONE_PATTERN}')`));
    assert.match(rule!.rule, /self\.lowerAscii\(\) != 'local'/);
    // The check against the API server's time zone database: an unknown zone fails the rule.
    assert.match(rule!.rule, /timestamp\('2000-01-01T00:00:00Z'\)\.getHours\(self\)/);
    assert.equal(SCHEDULED_ECHOS.schema.properties!.spec!.required!.includes('timeZone'), false, 'optional');
    assert.equal(schema.default, undefined, 'no default: stored objects stay as written');
  });

  it('has a TimeZone printer column', () => {
    assert.deepEqual(
      SCHEDULED_ECHOS.printerColumns.find((c) => c.name === 'TimeZone'),
      { name: 'TimeZone', type: 'string', jsonPath: '.spec.timeZone', description: 'The time zone of the schedule; empty: Etc/UTC.' },
    );
  });
});
