/**
 * Read your own writes (issue 13, defect 4): a first run over many new Echos makes no
 * self-inflicted 409. Each Echo's status is written before its Job is created; the Job's watch
 * event wakes the Echo again, often before the Echos watch has delivered that status write, and a
 * pass on the older cached copy made a conditional status write that the server refused
 * (hundreds per 1,000 Echos on a loaded server). The Echos watch is made to lag 300 ms behind
 * the Jobs watch (through a proxy), as on a loaded server; on an idle one it rarely lags enough
 * for the race to show. Counted exactly, from the API server's audit log.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { resourcePath } from '../../src/kube/index.js';
import type { Echo } from '../../src/api/echo.js';
import { ECHOS } from '../../src/api/echo.js';
import { JOBS } from '../../src/kube/resources.js';
import { watchProxy } from '../support/apiwatchproxy.js';
import { auditLogFrom } from '../support/audit.js';
import { pool, restClient, restItems } from '../support/faults.js';
import { eventually, kubeconfig, testNamespace } from '../support/kube.js';
import { installCrds, startOperator, waitReady } from '../support/operator.js';

const ECHO_COUNT = 300;

test(`a first run over ${ECHO_COUNT} new Echos at the default workers: no status write answered 409`, { timeout: 240_000 }, async (t) => {
  installCrds();
  const ns = testNamespace(t, 'ryw');
  const proxy = await watchProxy(t, { watches: /\/echos$/ });
  proxy.delay(300);
  const op = await startOperator(t, { KUBECONFIG: proxy.kubeconfig, WATCH_NAMESPACES: ns, NAMESPACE: ns, LOG_LEVEL: 'info' });
  await waitReady(op);
  const audit = auditLogFrom();
  const rest = restClient(t, kubeconfig());
  const names = Array.from({ length: ECHO_COUNT }, (_, i) => `e${String(i).padStart(3, '0')}`);
  await pool(names, 8, (name) =>
    rest.request('POST', resourcePath(ECHOS, ns), {
      body: { apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', metadata: { name }, spec: { message: `hello ${name}` } },
    }),
  );
  await eventually(
    `${ECHO_COUNT} Jobs and statuses`,
    async () => {
      const jobs = (await restItems<V1Job>(rest, resourcePath(JOBS, ns))).length;
      const echos = await restItems<Echo>(rest, resourcePath(ECHOS, ns));
      return jobs === ECHO_COUNT && echos.every((e) => e.status?.jobName && e.status.observedGeneration === 1);
    },
    180_000,
    1000,
  );
  const writes = audit.writes(ns);
  const statusWrites = writes.filter((w) => w.objectRef.resource === 'echos' && w.objectRef.subresource === 'status');
  const conflicts = statusWrites.filter((w) => w.responseStatus?.code === 409);
  const creates = writes.filter((w) => w.verb === 'create' && w.objectRef.resource === 'jobs');
  t.diagnostic(`${statusWrites.length} status writes, ${conflicts.length} answered 409; ${creates.length} Job creates`);
  assert.equal(conflicts.length, 0, 'no status write answered 409');
  assert.equal(creates.length, ECHO_COUNT, 'one Job create per Echo');
});
