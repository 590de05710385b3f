/**
 * Upgrades are safe: what a previous version left in a cluster (test/fixtures/upgrade/*.json,
 * recorded verbatim from a real run of that version by scripts/testbed/upgrade-fixture.ts) is adopted by
 * this version's controllers, made as their declarations make them (the declared caches, label
 * selectors and transforms), with no write, no new Job or CronJob and no Event.
 *
 * The fake server answers as the real one did when the new version met those objects in the
 * recorded cluster: a CronJob whose schedule it refuses is refused again with the message the
 * ScheduledEcho's Stalled condition holds (a refused attempt writes nothing). Each fixture stays,
 * so every later change keeps the promise for each version recorded.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { V1CronJob, V1Job } from '@kubernetes/client-node';
import { ECHOS, type Echo } from '../../src/api/echo.js';
import { SCHEDULED_ECHOS, type ScheduledEcho } from '../../src/api/scheduledecho.js';
import { runnableControllers } from '../../src/controllers/index.js';
import type { KubeObject } from '../../src/kube/object.js';
import { CRONJOBS, JOBS, type ResourceType } from '../../src/kube/resources.js';
import { isTerminalError } from '../../src/runtime/controller/terminal.js';
import { nopLogger } from '../../src/runtime/log.js';
import { findCondition, STALLED_CONDITION } from '../../src/runtime/reconcile/conditions.js';
import { ApiError } from '../../src/kube/errors.js';
import { fakeManagerParts, FakeClient } from '../../src/runtime/testing/index.js';
import { testSettings } from '../support/manager.js';

interface Fixture {
  recorded: { commit: string; jobImage: string; kubernetes: string; at: string };
  echos: Echo[];
  scheduledEchos: ScheduledEcho[];
  jobs: V1Job[];
  cronJobs: V1CronJob[];
}

const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'upgrade');
const fixtures = readdirSync(FIXTURES)
  .filter((f) => f.endsWith('.json'))
  .map((f) => JSON.parse(readFileSync(join(FIXTURES, f), 'utf8')) as Fixture);

const keyOf = (obj: KubeObject): string => `${obj.metadata?.namespace}/${obj.metadata?.name}`;

/** The server's 422 for a field its validation refuses: the Status names the field in its causes. */
function invalid(message: string): ApiError {
  const field = /is invalid: ([^:]+): /.exec(message)?.[1];
  assert.ok(field, `a field named in "${message}"`);
  const status = { kind: 'Status', status: 'Failure', code: 422, reason: 'Invalid', message, details: { causes: [{ field }] } };
  return new ApiError(422, 'Invalid', message, status);
}

/** The recorded cluster as a fake server that refuses what the real one refused. */
function serverFrom(fixture: Fixture): FakeClient {
  const client = new FakeClient();
  const put = <T extends KubeObject>(type: ResourceType<T>, objs: T[]) => objs.forEach((obj) => client.add(type, obj));
  put(ECHOS, fixture.echos);
  put(SCHEDULED_ECHOS, fixture.scheduledEchos);
  put(JOBS, fixture.jobs);
  put(CRONJOBS, fixture.cronJobs);
  const refused = new Map<string, string>();
  for (const se of fixture.scheduledEchos) {
    const stalled = findCondition(se.status?.conditions, STALLED_CONDITION);
    if (stalled?.status === 'True' && stalled.reason === 'Invalid') refused.set(keyOf(se), stalled.message ?? '');
  }
  client.prependReactor('apply', (request) => {
    const message = request.type.resource === CRONJOBS.resource ? refused.get(request.key) : undefined;
    return message === undefined ? undefined : invalid(message);
  });
  return client;
}

for (const fixture of fixtures) {
  const { commit, kubernetes, jobImage } = fixture.recorded;
  describe(`upgrading from ${commit} (recorded on Kubernetes ${kubernetes})`, () => {
    it('the fixture holds each state an upgrade meets', () => {
      const phases = fixture.echos.map((e) => e.status?.phase);
      assert.ok(phases.includes('Succeeded'), 'a succeeded Echo');
      const reasons = fixture.scheduledEchos.flatMap((se) => (se.status?.conditions ?? []).map((c) => c.reason));
      assert.ok(reasons.includes('Invalid') && reasons.includes('NameTaken'), 'ScheduledEchos stalled both ways');
      assert.ok(
        fixture.scheduledEchos.some((se) => se.status?.lastScheduleTime),
        'a ScheduledEcho whose CronJob fired',
      );
      assert.ok(
        fixture.scheduledEchos.some((se) => se.spec.timeZone),
        'a ScheduledEcho with a time zone',
      );
    });

    it('every Echo and ScheduledEcho reconciled twice: no write, no new Job or CronJob, no Event', async () => {
      const client = serverFrom(fixture);
      const ctx = { log: nopLogger, signal: new AbortController().signal, reconcileID: 'upgrade' };
      let reconciled = 0;
      for (const controller of runnableControllers({ ...testSettings(), jobImage })) {
        const primaries = client.all(controller.primary);
        // A kind newer than the recorded version has nothing to adopt; the count below holds the
        // recorded kinds to being reconciled.
        if (primaries.length === 0) continue;
        const manager = fakeManagerParts(controller, client);
        manager.sync();
        const reconciler = controller.reconciler(manager.parts);
        for (let pass = 0; pass < 2; pass++) {
          for (const obj of primaries) {
            const outcome = await reconciler.reconcile(keyOf(obj), ctx).then(
              () => undefined,
              (err: unknown) => err,
            );
            const stalled = findCondition((obj as Echo | ScheduledEcho).status?.conditions, STALLED_CONDITION);
            if (stalled?.status === 'True') assert.ok(isTerminalError(outcome), `${keyOf(obj)} stays stalled: ${String(outcome)}`);
            else assert.equal(outcome, undefined, `${keyOf(obj)} reconciles cleanly`);
            reconciled++;
          }
          manager.sync();
        }
        assert.deepEqual(manager.events.lines(), [], `${controller.name}: no Event`);
      }
      assert.equal(reconciled, 2 * (fixture.echos.length + fixture.scheduledEchos.length));
      assert.deepEqual(
        client.writes.map((w) => `${w.verb} ${w.type.resource} ${w.key}`),
        [],
        'no write of any kind',
      );
      assert.equal(client.all(JOBS).length, fixture.jobs.length, 'no new Job');
      assert.equal(client.all(CRONJOBS).length, fixture.cronJobs.length, 'no new CronJob');
    });
  });
}
