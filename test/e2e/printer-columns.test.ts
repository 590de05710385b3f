/**
 * What `kubectl get echos` and `kubectl get scheduledechos` print on the real API server (the
 * server renders the CRDs' printer columns into a Table): the kinds' own columns, then the Ready
 * condition's status and reason as the operator wrote them, then Age.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ECHOS } from '../../src/api/echo.js';
import { SCHEDULED_ECHOS } from '../../src/api/scheduledecho.js';
import { READY_CONDITION } from '../../src/runtime/reconcile/conditions.js';
import { applyEcho, applyScheduledEcho, conditionOf, eventually, kubectlOk } from '../support/kube.js';
import { operatorIn } from '../support/operator.js';
import { getEcho } from '../support/runs.js';
import { getScheduledEcho } from '../support/scheduledechos.js';

/**
 * `kubectl get <resource>`'s column names and the cells of `name`'s row, cut where each column name
 * starts (kubectl left-aligns cells under their names; an empty cell is blank).
 */
function table(resource: string, ns: string, name: string): { header: string[]; row: string[]; text: string } {
  const text = kubectlOk(['get', resource, '-n', ns]);
  const [headerLine, ...rows] = text.trimEnd().split('\n');
  const columns = [...headerLine!.matchAll(/\S+(?: \S+)*/g)].map((m) => ({ name: m[0], start: m.index }));
  const cells = (line: string) => columns.map((c, i) => line.slice(c.start, columns[i + 1]?.start ?? line.length).trim());
  const row = rows.map(cells).find((r) => r[0] === name);
  assert.ok(row, `a row for ${name} in:\n${text}`);
  return { header: columns.map((c) => c.name), row, text };
}

test("kubectl get shows each kind's Ready condition status and reason beside its own columns", async (t) => {
  const { ns } = await operatorIn(t, 'columns');
  applyEcho(ns, 'hello', 'hello');
  applyScheduledEcho(ns, 'tick', { message: 'tick', schedule: '@hourly' });
  const echoReady = await eventually('the Echo to have a Ready condition', () => conditionOf(getEcho(ns, 'hello'), READY_CONDITION));
  const tickReady = await eventually('the ScheduledEcho to be Ready', () => {
    const c = conditionOf(getScheduledEcho(ns, 'tick'), READY_CONDITION);
    return c?.status === 'True' && c;
  });

  const echos = table(ECHOS.resource, ns, 'hello');
  t.diagnostic(`kubectl get ${ECHOS.resource}:\n${echos.text}`);
  assert.deepEqual(echos.header, ['NAME', 'PHASE', 'JOB', 'READY', 'REASON', 'AGE']);
  // The Echo's pod stays off the node here: its Job never finishes, so Ready is False (JobPending or JobRunning).
  const echo = getEcho(ns, 'hello');
  const ready = conditionOf(echo, READY_CONDITION) ?? echoReady;
  assert.deepEqual(echos.row.slice(1, 5), [echo.status!.phase, echo.status!.jobName, ready.status, ready.reason]);

  const ticks = table(SCHEDULED_ECHOS.resource, ns, 'tick');
  t.diagnostic(`kubectl get ${SCHEDULED_ECHOS.resource}:\n${ticks.text}`);
  // No time zone set, no run yet: blank cells.
  assert.deepEqual(ticks.header, ['NAME', 'SCHEDULE', 'TIMEZONE', 'LAST RUN', 'READY', 'REASON', 'AGE']);
  assert.deepEqual(ticks.row.slice(1, 6), ['@hourly', '', '', tickReady.status, tickReady.reason]);
  assert.equal(tickReady.reason, 'CronJobReady');
});
