/**
 * `npx tsx scripts/testbed/upgrade-fixture.ts <commit> <job image> <out.json>`: records, from the cluster
 * in KUBECONFIG, the Echos, ScheduledEchos, Jobs and CronJobs an installed operator left there,
 * verbatim (server fields, managedFields, status), into a fixture for test/unit/upgrade.test.ts.
 *
 * How the fixture in test/fixtures/upgrade/ was made: the previous version checked out in a git
 * worktree, its `npm run demo` (the in-cluster install on a node), then objects in each state an
 * upgrade meets (succeeded, edited and run again, a CronJob that fired, a schedule the server
 * refuses, a name held by a foreign CronJob, a time zone), then this script.
 */
import { writeFileSync } from 'node:fs';
import { ECHOS } from '../../src/api/echo.js';
import { SCHEDULED_ECHOS } from '../../src/api/scheduledecho.js';
import { kubectlFor } from './kubectl.js';
import { exitWithError } from '../ship/errors.js';

const [commit, jobImage, out] = process.argv.slice(2);
if (!commit || !jobImage || !out || !process.env.KUBECONFIG) {
  exitWithError(new Error('usage: KUBECONFIG=... npx tsx scripts/testbed/upgrade-fixture.ts <commit> <job image> <out.json>'));
}
const kubectl = kubectlFor(process.env.KUBECONFIG);
const items = (resource: string): unknown[] => kubectl.json<{ items: unknown[] }>(['get', resource, '-A', '-o', 'json']).items;
const version = kubectl.json<{ serverVersion: { gitVersion: string } }>(['version', '-o', 'json']).serverVersion.gitVersion;
const fixture = {
  recorded: { commit, jobImage, kubernetes: version, at: new Date().toISOString() },
  echos: items(`${ECHOS.resource}.${ECHOS.group}`),
  scheduledEchos: items(`${SCHEDULED_ECHOS.resource}.${SCHEDULED_ECHOS.group}`),
  jobs: items('jobs.batch'),
  cronJobs: items('cronjobs.batch'),
};
writeFileSync(out, JSON.stringify(fixture, null, 1) + '\n');
console.error(
  `recorded ${fixture.echos.length} Echos, ${fixture.scheduledEchos.length} ScheduledEchos, ${fixture.jobs.length} Jobs, ${fixture.cronJobs.length} CronJobs into ${out}`,
);
