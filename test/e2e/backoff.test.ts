/**
 * A write the server refuses for good backs off like any error (issue 13, defect 1): a namespace
 * whose Job creates are all refused by a quota, one Echo, and the operator's Echo watch lagging
 * ~1 s behind (through a proxy), so its conditional status writes keep meeting 409 Conflicts.
 * Before the fix a conflict reset the key's backoff and looked again after a fixed 200 ms: a Job
 * create about every second, forever, and the Reconciled condition flipping True/False.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1ResourceQuota } from '@kubernetes/client-node';
import { watchProxy } from '../support/apiwatchproxy.js';
import { auditLogFrom } from '../support/audit.js';
import { applyEcho, conditionOf, eventually, kubectlJson, kubectlOk, testNamespace } from '../support/kube.js';
import { getEcho } from '../support/runs.js';
import { installCrds, startOperator, waitReady } from '../support/operator.js';

const WINDOW_MS = 60_000;
/** 5 ms doubling: the 14th retry is due ~41 s after the first failure, the 15th ~82 s. */
const MAX_CREATES = 15;

test(
  'Job creates refused by a quota back off (at most 15 in 60 s) and Reconciled says why without flapping, with a lagging Echo watch',
  { timeout: 180_000 },
  async (t) => {
    installCrds();
    const ns = testNamespace(t, 'quota');
    kubectlOk(['create', 'quota', 'no-jobs', '--hard=count/jobs.batch=0'], { namespace: ns });
    // The quota admission enforces a quota only once the quota controller has computed its usage.
    await eventually(
      'the quota controller to compute the quota',
      () => kubectlJson<V1ResourceQuota>(['get', 'quota', 'no-jobs'], { namespace: ns }).status?.used?.['count/jobs.batch'] === '0',
    );
    const proxy = await watchProxy(t, { watches: /\/echos$/ });
    proxy.delay(1000);
    const op = await startOperator(t, { KUBECONFIG: proxy.kubeconfig, WATCH_NAMESPACES: ns, NAMESPACE: ns, LOG_LEVEL: 'info' });
    await waitReady(op);

    const audit = auditLogFrom();
    applyEcho(ns, 'refused', 'hello');
    const seen: { status: string; reason: string; at: string }[] = [];
    const end = Date.now() + WINDOW_MS;
    while (Date.now() < end) {
      const c = conditionOf(getEcho(ns, 'refused'), 'Reconciled');
      if (c && (seen.length === 0 || seen.at(-1)!.status !== c.status || seen.at(-1)!.at !== c.lastTransitionTime)) {
        seen.push({ status: c.status, reason: c.reason, at: c.lastTransitionTime });
      }
      await sleep(250); // sampling a measured window, the thing under test: no condition ends it early
    }
    const writes = audit.writes(ns);
    const creates = writes.filter((w) => w.verb === 'create' && w.objectRef.resource === 'jobs');
    const conflicts = writes.filter((w) => w.responseStatus?.code === 409);
    t.diagnostic(
      `in ${WINDOW_MS / 1000} s: ${creates.length} Job creates, ${conflicts.length} writes answered 409, ${writes.length} writes in all; Reconciled: ${JSON.stringify(seen)}`,
    );
    assert.ok(creates.length >= 2, `the operator did try (${creates.length} Job creates)`);
    assert.ok(creates.length <= MAX_CREATES, `at most ${MAX_CREATES} Job creates in ${WINDOW_MS / 1000} s, not a loop: ${creates.length}`);
    assert.ok(
      creates.every((w) => w.responseStatus?.code === 403),
      'every create was refused by the quota',
    );
    const last = seen.at(-1);
    assert.equal(last?.status, 'False', 'Reconciled=False');
    const reconciled = conditionOf(getEcho(ns, 'refused'), 'Reconciled')!;
    assert.equal(reconciled.reason, 'Forbidden');
    assert.match(reconciled.message, /exceeded quota/, 'the condition says why');
    assert.ok(seen.filter((s) => s.status === 'False').length <= 1, `the condition went False once and stayed so: ${JSON.stringify(seen)}`);
    assert.ok(seen.filter((s) => s.status === 'True').length <= 1, `it never flipped back to True: ${JSON.stringify(seen)}`);
  },
);
