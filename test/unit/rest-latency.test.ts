/**
 * rest_client_request_duration_seconds{verb}: one observation per call, as client-go observes its
 * request latency around the retry loop: the whole call (retries included) for answers, errors
 * and transport failures alike; none for a watch, whose length is not a latency. Against a local
 * HTTP server, with the client's monotonic clock moved by the server so that times are exact.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { Histogram } from 'prom-client';
import { after, describe, it } from 'node:test';
import { ApiError } from '../../src/kube/errors.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { restClientOn } from '../support/localapi.js';

const HISTOGRAM = 'rest_client_request_duration_seconds';

/**
 * A client of a local server whose every answer first moves the client's clock on by `tookMs`
 * (a reply of status 0: the connection is cut, no answer), and whose sleeps move it as asked.
 */
async function measured(replies: (n: number) => { status: number; tookMs: number; body?: string; headers?: Record<string, string> }) {
  const clock = { ms: 0 };
  let n = 0;
  const srv = createServer((req, res) => {
    req.resume();
    const r = replies(n++);
    clock.ms += r.tookMs;
    if (r.status === 0) return void req.socket.destroy();
    res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
    res.end(r.body ?? '{}');
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  after(() => srv.close());
  const metrics = createMetrics({ defaultMetrics: false });
  const rest = restClientOn({ after }, srv, { metrics: metrics.rest, now: () => clock.ms, sleep: async (ms) => void (clock.ms += ms) });
  return { rest, registry: metrics.registry };
}

/** verb -> { count, sum, buckets (le -> cumulative count) } of the histogram. */
async function observed(registry: ReturnType<typeof createMetrics>['registry']) {
  const byVerb = new Map<string, { count: number; sum: number; buckets: Map<string, number> }>();
  for (const v of (await (registry.getSingleMetric(HISTOGRAM) as Histogram).get()).values) {
    const verb = String(v.labels.verb);
    const entry = byVerb.get(verb) ?? { count: 0, sum: 0, buckets: new Map() };
    byVerb.set(verb, entry);
    if (v.metricName === `${HISTOGRAM}_count`) entry.count = v.value;
    if (v.metricName === `${HISTOGRAM}_sum`) entry.sum = v.value;
    if (v.metricName === `${HISTOGRAM}_bucket`) entry.buckets.set(String(v.labels.le), v.value);
  }
  return byVerb;
}

describe(HISTOGRAM, () => {
  it('observes each call once, by verb, with its whole time', async () => {
    const c = await measured((n) => ({ status: n === 0 ? 200 : 201, tookMs: n === 0 ? 1_500 : 20 }));
    await c.rest.request('GET', '/api/v1/namespaces/default/configmaps/x');
    await c.rest.request('POST', '/api/v1/namespaces/default/configmaps', { body: {} });
    const byVerb = await observed(c.registry);
    assert.deepEqual([...byVerb.keys()].sort(), ['GET', 'POST']);
    assert.equal(byVerb.get('GET')!.count, 1);
    assert.equal(byVerb.get('GET')!.sum, 1.5);
    assert.equal(byVerb.get('GET')!.buckets.get('1'), 0, 'client-go buckets: 1.5 s is above le=1');
    assert.equal(byVerb.get('GET')!.buckets.get('2'), 1);
    assert.equal(byVerb.get('POST')!.sum, 0.02);
  });

  it('counts a call retried after 429s once, its retries and waits included, and a refused call too', async () => {
    const c = await measured((n) =>
      n < 2
        ? { status: 429, tookMs: 100, headers: { 'retry-after': '1' }, body: 'slow down' }
        : n === 2
          ? { status: 200, tookMs: 100 }
          : { status: 403, tookMs: 50 },
    );
    await c.rest.request('PATCH', '/x', { body: {} });
    await assert.rejects(c.rest.request('PATCH', '/x', { body: {} }));
    const patch = (await observed(c.registry)).get('PATCH')!;
    assert.equal(patch.count, 2, 'one observation per call, not per attempt');
    assert.equal(patch.sum, 2.3 + 0.05, 'three answers of 0.1 s and two waits of 1 s, then a 403 of 0.05 s');
  });

  it('observes a call that got no answer at all', async () => {
    const c = await measured(() => ({ status: 0, tookMs: 700 }));
    await assert.rejects(c.rest.request('GET', '/x'), (err: ApiError) => err.code === 0);
    const get = (await observed(c.registry)).get('GET');
    assert.equal(get?.count, 1);
    assert.equal(get?.sum, 0.7);
  });

  it('observes no watch', async () => {
    const c = await measured(() => ({ status: 200, tookMs: 30_000, body: '{"type":"ADDED","object":{}}\n' }));
    const lines: string[] = [];
    await c.rest.stream('/api/v1/configmaps', { watch: true }, new AbortController().signal, (l) => lines.push(l));
    assert.equal(lines.length, 1, 'the watch ran');
    assert.equal((await observed(c.registry)).size, 0);
  });
});
