/**
 * The owner index (issue 44, item 4) on the real control plane: a tenant who can read an Echo's
 * UID in namespace B plants Jobs in its own namespace A under that UID, one with the name the
 * Echo's next run will have and one "previous run". The operator, serving both namespaces, takes
 * neither as the Echo's: the next run gets its own Job in B, and the operator writes nothing in A
 * (the audit log says so; the garbage collector's own deletes of the dangling Jobs are not the
 * operator's).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { Echo } from '../../src/api/echo.js';
import { desiredJob, jobNameFor } from '../../src/controllers/echo/desired.js';
import { auditLogFrom } from '../support/audit.js';
import { applyEcho, eventually, jobsOf, kubectlOk, onlyJobOf, testNamespace } from '../support/kube.js';
import { installCrds, startOperator, waitReady } from '../support/operator.js';
import { getEcho } from '../support/runs.js';

test("Jobs planted in another namespace under an Echo's UID change nothing for the Echo", async (t) => {
  const victim = testNamespace(t, 'owner-victim');
  const tenant = testNamespace(t, 'owner-tenant');
  installCrds();
  const op = await startOperator(t, { WATCH_NAMESPACES: `${victim},${tenant}`, NAMESPACE: victim });
  await waitReady(op);
  applyEcho(victim, 'hello', 'first');
  const first = await onlyJobOf(victim, 'hello');
  const echo = getEcho(victim, 'hello');
  const image = first.spec!.template.spec!.containers[0]!.image!;
  const next: Echo = { ...echo, spec: { message: 'second' } };

  // What the operator's own Job would be, in the tenant's namespace (its labels put it in the
  // operator's cache), suspended so no pod runs.
  const planted = (name: string) => {
    const job = desiredJob(echo, image);
    return { ...job, metadata: { ...job.metadata, name, namespace: tenant }, spec: { ...job.spec!, suspend: true } };
  };
  const audit = auditLogFrom();
  kubectlOk(['create', '-f', '-'], {
    input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [planted(jobNameFor(next)), planted('hello-previous-run')] }),
  });
  applyEcho(victim, 'hello', 'second');

  const status = await eventually('the Echo reports its second run', () => {
    const s = getEcho(victim, 'hello').status;
    return s?.observedGeneration === 2 && s.jobName === jobNameFor(next) ? s : undefined;
  });
  assert.equal(status.jobName, jobNameFor(next));
  await eventually("the second run's Job in the Echo's namespace", () =>
    jobsOf(victim, 'hello').some((j) => j.metadata?.name === jobNameFor(next)),
  );
  const inTenant = audit.writes(tenant).map((e) => `${e.verb} ${e.objectRef.resource} ${e.objectRef.name}`);
  assert.deepEqual(inTenant, [], "the operator wrote nothing in the tenant's namespace");
  const events = kubectlOk(['get', 'events', '--field-selector', 'involvedObject.name=hello', '-o', 'jsonpath={.items[*].message}'], {
    namespace: victim,
  });
  assert.doesNotMatch(events, /hello-previous-run/, 'no Event about a planted Job on the Echo');
});
