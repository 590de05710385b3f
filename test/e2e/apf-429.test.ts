/**
 * API Priority and Fairness rejecting the operator's requests (issue 13, defect 2): a
 * PriorityLevelConfiguration of one seat that rejects what does not fit (limitResponse Reject:
 * a plain-text 429 with Retry-After), and a FlowSchema that puts the operator's ServiceAccount in
 * it. The operator runs as that ServiceAccount (the install's), not as the admin, whose
 * system:masters requests APF exempts. On a control plane of the test's own, with
 * --max-requests-inflight=1 --max-mutating-requests-inflight=1, so that one concurrency share is
 * one seat (and the FlowSchema cannot slow other tests). 300 Echos: every one must end with its
 * Job and its final status, no 429 may become a ReconcileFailed Event or a failure condition,
 * and the retry metric must have moved (the 429s were retried as told).
 */
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { CoreV1Event, V1Job } from '@kubernetes/client-node';
import { resourcePath } from '../../src/kube/index.js';
import type { Echo } from '../../src/api/echo.js';
import { ECHOS } from '../../src/api/echo.js';
import { STALLED_CONDITION } from '../../src/runtime/reconcile/conditions.js';
import { RECONCILED_CONDITION } from '../../src/controllers/echo/status.js';
import { EVENTS, JOBS } from '../../src/kube/resources.js';
import { auditLogFrom } from '../support/audit.js';
import { metricValue, pool, restClient, restItems, startPrivateControlPlane, type PrivateControlPlane } from '../support/faults.js';
import { confinementActive, installEchoperator } from '../support/install.js';
import { eventually, kubectlOk, testNamespace } from '../support/kube.js';
import { startOperator, waitReady } from '../support/operator.js';

const ECHO_COUNT = 300;

let cp: PrivateControlPlane | undefined;
before(async () => {
  cp = await startPrivateControlPlane({ extraApiserverArgs: ['--max-requests-inflight=1', '--max-mutating-requests-inflight=1'] });
  // This file's helpers (namespaces, the install, kubectl) act on this control plane only.
  process.env.KUBECONFIG = cp.state.kubeconfig;
});
after(async () => {
  await cp?.stop();
});

function oneSeatFor(serviceAccount: string, namespace: string): string {
  const name = `one-seat-${namespace}`;
  const priorityLevel = {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'PriorityLevelConfiguration',
    metadata: { name },
    spec: {
      type: 'Limited',
      // Neither lends its seat nor borrows others' idle ones: one seat, whatever else is idle.
      limited: { nominalConcurrencyShares: 1, lendablePercent: 0, borrowingLimitPercent: 0, limitResponse: { type: 'Reject' } },
    },
  };
  const flowSchema = {
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name },
    spec: {
      priorityLevelConfiguration: { name },
      // Ahead of every suggested FlowSchema that could match a ServiceAccount.
      matchingPrecedence: 150,
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'ServiceAccount', serviceAccount: { name: serviceAccount, namespace } }],
          resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'], namespaces: ['*'], clusterScope: true }],
          nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
        },
      ],
    },
  };
  kubectlOk(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: [priorityLevel, flowSchema] }) });
  return name;
}

test(
  `APF rejecting the operator (one seat, Reject), ${ECHO_COUNT} Echos: all done, 429s retried, none reported as a failure`,
  { timeout: 420_000 },
  async (t) => {
    const ns = testNamespace(t, 'apf');
    const install = installEchoperator(t, { watchNamespaces: [ns] }, { workload: false });
    await confinementActive(install, ns);
    const priorityLevel = oneSeatFor(install.serviceAccount, install.namespace);
    const op = await startOperator(t, {
      KUBECONFIG: install.kubeconfig,
      NAMESPACE: install.namespace,
      WATCH_NAMESPACES: ns,
      LOG_LEVEL: 'info',
    });
    await waitReady(op, 120_000);

    // Every version of every Echo, to catch a failure condition written and later overwritten.
    const admin = restClient(t, cp!.state.kubeconfig);
    const failed: string[] = [];
    const watching = new AbortController();
    t.after(() => watching.abort());
    const watched = admin
      .stream(resourcePath(ECHOS, ns), { watch: true }, watching.signal, (line) => {
        const echo = (JSON.parse(line) as { object?: Echo }).object;
        // A failed pass says Reconciled=False; a run that cannot succeed says Stalled=True. Ready=False
        // alone is a run in progress (kstatus), which every Echo goes through.
        for (const c of echo?.status?.conditions ?? []) {
          const failure =
            (c.type === RECONCILED_CONDITION && c.status === 'False') || (c.type === STALLED_CONDITION && c.status === 'True');
          if (failure) failed.push(`${echo!.metadata.name}: ${c.type}=${c.status} ${c.reason}: ${c.message}`);
        }
      })
      .catch(() => undefined);

    const audit = auditLogFrom(cp!.state.kubeconfig);
    const names = Array.from({ length: ECHO_COUNT }, (_, i) => `e${String(i).padStart(3, '0')}`);
    await pool(names, 8, (name) =>
      admin.request('POST', resourcePath(ECHOS, ns), {
        body: { apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', metadata: { name }, spec: { message: `hello ${name}` } },
      }),
    );

    // Final: the Job exists and has started (the job controller runs as the admin), and the Echo's
    // status mirrors it: phase Running, Reconciled=True, for the Echo's current generation.
    await eventually(
      `${ECHO_COUNT} Echos with their Job and final status`,
      async () => {
        const jobs = await restItems<V1Job>(admin, resourcePath(JOBS, ns));
        const echos = await restItems<Echo>(admin, resourcePath(ECHOS, ns));
        const started = new Set(jobs.filter((j) => j.status?.startTime).map((j) => j.metadata!.name));
        return (
          jobs.length === ECHO_COUNT &&
          echos.length === ECHO_COUNT &&
          echos.every(
            (e) =>
              started.has(e.status?.jobName) &&
              e.status!.phase === 'Running' &&
              e.status!.observedGeneration === e.metadata.generation &&
              e.status!.conditions?.some((c) => c.type === 'Reconciled' && c.status === 'True'),
          )
        );
      },
      300_000,
      2000,
    );

    const rejected = (await metricValue(op, 'rest_client_requests_total', { code: '429', method: 'PATCH' })) ?? 0;
    const retries = {
      GET: (await metricValue(op, 'rest_client_request_retries_total', { code: '429', method: 'GET' })) ?? 0,
      POST: (await metricValue(op, 'rest_client_request_retries_total', { code: '429', method: 'POST' })) ?? 0,
      PATCH: (await metricValue(op, 'rest_client_request_retries_total', { code: '429', method: 'PATCH' })) ?? 0,
    };
    const writes = audit.writes(ns);
    const events = (await restItems<CoreV1Event>(admin, resourcePath(EVENTS, ns))).filter((e) => e.reason === 'ReconcileFailed');
    t.diagnostic(
      `priority level ${priorityLevel}: ${writes.filter((w) => w.responseStatus?.code === 429).length} of ${writes.length} writes answered 429 (audit log); ` +
        `retries of 429 by method ${JSON.stringify(retries)}; PATCHes answered 429 ${rejected}`,
    );
    watching.abort();
    await watched;
    assert.deepEqual(
      events.map((e) => `${e.involvedObject.name}: ${e.message}`),
      [],
      'no ReconcileFailed Event',
    );
    assert.deepEqual(failed, [], 'no failure condition was ever written');
    assert.ok(retries.GET + retries.POST + retries.PATCH > 0, 'the operator met 429s and retried them (rest_client_request_retries_total)');
    assert.equal(
      writes.filter((w) => w.verb === 'create' && w.objectRef.resource === 'jobs' && w.responseStatus?.code === 201).length,
      ECHO_COUNT,
      'one Job per Echo',
    );
  },
);
