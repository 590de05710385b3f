/**
 * No Event lost to a backlog or to shutdown: the operator starts over 1,500 existing Echos (its
 * queues stay busy for the whole backlog, so Events are held back), is stopped by SIGTERM once
 * every Job exists, and every Event it recorded is in the API server by the time it exits. With
 * 1,500 the backlog outgrows the recorder's queue (1,000) while Events are held, which is where
 * Events used to be dropped, and the flush at shutdown used to be cut off after 2 s.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CoreV1Event } from '@kubernetes/client-node';
import { API_VERSION } from '../../src/api/group.js';
import { ECHOS } from '../../src/api/echo.js';
import { RestClient, loadKubeConfig } from '../../src/kube/index.js';
import { isAlreadyExists } from '../../src/kube/errors.js';
import { EVENTS, JOBS, resourcePath } from '../../src/kube/resources.js';
import { eventually, kubeconfig, testNamespace, type KubeList } from '../support/kube.js';
import { installCrds, startOperator, waitReady } from '../support/operator.js';

const ECHO_COUNT = 1500;

interface LogLine {
  level: string;
  msg: string;
  [field: string]: unknown;
}

function logLines(output: string): LogLine[] {
  return output.split('\n').flatMap((line) => {
    if (!line.startsWith('{')) return [];
    try {
      return [JSON.parse(line) as LogLine];
    } catch {
      return [];
    }
  });
}

/** How many objects a collection holds, cheaply (one item and the server's remaining count). */
async function count(rest: RestClient, path: string): Promise<number> {
  const page = await rest.request<KubeList<unknown>>('GET', path, { query: { limit: 1 } });
  return page.items.length + (page.metadata?.remainingItemCount ?? 0);
}

/** Every Event echoperator wrote in ns, page by page. */
async function ourEvents(rest: RestClient, ns: string): Promise<CoreV1Event[]> {
  const items: CoreV1Event[] = [];
  let cont: string | undefined;
  do {
    const page = await rest.request<KubeList<CoreV1Event>>('GET', resourcePath(EVENTS, ns), {
      query: { fieldSelector: 'source=echoperator', limit: 500, continue: cont },
      timeoutMs: 60_000,
    });
    items.push(...page.items);
    cont = page.metadata?.continue || undefined;
  } while (cont);
  return items;
}

async function createEchos(rest: RestClient, ns: string, n: number, concurrency: number): Promise<void> {
  let next = 0;
  const one = async (): Promise<void> => {
    for (let i = next++; i < n; i = next++) {
      const name = `echo-${String(i).padStart(5, '0')}`;
      const body = { apiVersion: API_VERSION, kind: 'Echo', metadata: { name }, spec: { message: `hello ${i}` } };
      await rest.request('POST', resourcePath(ECHOS, ns), { body }).catch((err: unknown) => {
        if (!isAlreadyExists(err)) throw err; // a retried POST whose first attempt went through
      });
    }
  };
  await Promise.all(Array.from({ length: concurrency }, one));
}

test(
  `a backlog of ${ECHO_COUNT} Echos stopped by SIGTERM once every Job exists: every Event written, none dropped or abandoned`,
  { timeout: 600_000 },
  async (t) => {
    installCrds();
    const ns = testNamespace(t, 'events-backlog');
    const rest = new RestClient(loadKubeConfig(kubeconfig()), { userAgent: 'echoperator-e2e' });
    t.after(() => rest.close());
    await createEchos(rest, ns, ECHO_COUNT, 8);

    const op = await startOperator(t, { WATCH_NAMESPACES: ns, NAMESPACE: ns, LOG_LEVEL: 'info' });
    await waitReady(op, 120_000);
    await eventually(`${ECHO_COUNT} Jobs`, async () => (await count(rest, resourcePath(JOBS, ns))) === ECHO_COUNT, 300_000, 1_000);
    assert.equal(await op.stop('SIGTERM'), 0, 'a graceful stop');

    const lines = logLines(op.output());
    const bad = lines.filter((l) => /^event (dropped|recorder closed before)|^event not written/.test(l.msg));
    assert.deepEqual(bad, [], 'no Event dropped, abandoned or given up');
    const closed = lines.find((l) => l.msg === 'event recorder closed: every event written');
    assert.ok(closed, `the recorder says what it wrote:\n${op.output().slice(-3000)}`);
    t.diagnostic(
      `recorder at close: ${JSON.stringify({ created: closed.created, patched: closed.patched, flushed: closed.flushed, ms: closed.ms })}`,
    );

    const events = await ourEvents(rest, ns);
    assert.equal(events.length, closed.created, 'the Events in the namespace are the ones the recorder says it created');
    const echosWithJobCreated = new Set(events.filter((e) => e.reason === 'JobCreated').map((e) => e.involvedObject.name));
    assert.equal(echosWithJobCreated.size, ECHO_COUNT, 'one JobCreated per Echo at least');
  },
);
