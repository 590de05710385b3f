import assert from 'node:assert/strict';
import { request } from 'node:http';
import { after, describe, it } from 'node:test';
import { HealthServer } from '../../src/observability/health.js';
import { ListenError } from '../../src/observability/http.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { EventLoopSampler } from '../../src/observability/loopsampler.js';
import { MetricsServer } from '../../src/observability/metricsserver.js';
import { FakeClock } from '../../src/runtime/testing/clock.js';
import { fakeLoop } from '../support/eventloop.js';
import { eventually } from '../support/eventually.js';

interface Reply {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

/** A plain HTTP request with keep-alive, as the kubelet and Prometheus make them. */
function get(port: number, path: string, method = 'GET', fresh = false): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const options = { host: '127.0.0.1', port, path, method, headers: { Connection: 'keep-alive' }, ...(fresh ? { agent: false } : {}) };
    const req = request(options, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function started(options: ConstructorParameters<typeof HealthServer>[0] = { port: 0, watchdog: false }): Promise<HealthServer> {
  const server = new HealthServer(options);
  await server.start();
  after(() => server.close());
  return server;
}

/** Why the eventloop check fails now ('true' when it passes). */
function eventloopReason(server: HealthServer): string {
  return String(server.evaluate('healthz').checks.find((c) => c.name === 'eventloop')?.reason ?? true);
}

describe('health server', () => {
  it('binds a free port for port 0 and answers ok on both endpoints', async () => {
    const server = await started();
    assert.ok(server.port > 0);
    for (const path of ['/healthz', '/readyz']) {
      const r = await get(server.port, path);
      assert.equal(r.status, 200);
      assert.equal(r.body, 'ok');
      assert.match(String(r.headers['content-type']), /^text\/plain/);
    }
  });

  it('lists each check with ?verbose, like kube-apiserver', async () => {
    const server = await started();
    server.addLivenessCheck('informers', () => true);
    server.addReadinessCheck('leader-election', () => true);
    assert.equal((await get(server.port, '/healthz?verbose')).body, '[+]ping ok\n[+]informers ok\nhealthz check passed\n');
    assert.equal(
      (await get(server.port, '/readyz?verbose=1')).body,
      '[+]ping ok\n[+]informers ok\n[+]leader-election ok\nreadyz check passed\n',
    );
  });

  it('fails /readyz on a failing readiness check, naming it without its reason, leaving /healthz alone', async () => {
    const server = await started();
    let synced: boolean | string = 'caches not synced: echos';
    server.addReadinessCheck('caches', () => synced);
    const ready = await get(server.port, '/readyz');
    assert.equal(ready.status, 500);
    assert.equal(ready.body, '[+]ping ok\n[-]caches failed\nreadyz check failed\n');
    assert.equal((await get(server.port, '/healthz')).status, 200);
    synced = true;
    assert.equal((await get(server.port, '/readyz')).status, 200);
    synced = false;
    assert.match((await get(server.port, '/readyz')).body, /^\[-\]caches failed$/m);
  });

  it('tells an anonymous caller which checks fail, never why; the reasons go to the log, once per change', async () => {
    const logged: { msg: string; fields?: Record<string, unknown> }[] = [];
    const log = (msg: string, fields?: Record<string, unknown>): void => void logged.push({ msg, fields });
    const logger = { debug: log, info: log, warn: log, error: log, child: () => logger };
    const server = await started({ port: 0, watchdog: false, logger });
    const secret = 'GET /api: proxy 10.1.2.3:3128 did not answer CONNECT within 10000 ms';
    server.addLivenessCheck('apiserver', () => secret);
    server.addReadinessCheck('caches', () => 'caches not synced: echos in team-secret');
    for (const path of ['/healthz', '/healthz?verbose', '/readyz', '/readyz?verbose=1', '/healthz/apiserver', '/readyz/caches']) {
      const r = await get(server.port, path);
      assert.equal(r.status, 500, path);
      assert.doesNotMatch(r.body, /10\.1\.2\.3|CONNECT|team-secret|not synced/, `${path} says no reason: ${r.body}`);
      assert.match(r.body, /^\[-\](apiserver|caches) failed$/m, path);
    }
    const reasons = logged.filter((l) => l.msg === 'health check failing').map((l) => l.fields?.reason);
    assert.ok(reasons.includes(secret), 'the reason is in the log');
    assert.ok(reasons.includes('caches not synced: echos in team-secret'));
    // Once per endpoint and check while the reason stays the same, not once per probe.
    assert.equal(reasons.length, 3, JSON.stringify(logged));
  });

  it('fails /healthz and /readyz on a failing or throwing liveness check', async () => {
    const server = await started();
    server.addLivenessCheck('workers', () => {
      throw new Error('worker pool\ncrashed');
    });
    for (const path of ['/healthz', '/readyz']) {
      const r = await get(server.port, path);
      assert.equal(r.status, 500);
      assert.match(r.body, /^\[-\]workers failed$/m);
      assert.doesNotMatch(r.body, /crashed/);
    }
  });

  it('skips checks named in ?exclude and answers one check at /healthz/<name>', async () => {
    const server = await started();
    server.addLivenessCheck('broken', () => 'down');
    server.addLivenessCheck('fine', () => true);
    assert.equal((await get(server.port, '/healthz?exclude=broken')).status, 200);
    assert.deepEqual(await get(server.port, '/healthz/fine').then((r) => [r.status, r.body]), [200, 'ok']);
    assert.deepEqual(await get(server.port, '/healthz/broken').then((r) => [r.status, r.body]), [500, '[-]broken failed\n']);
    assert.equal((await get(server.port, '/healthz/nothing')).status, 404);
  });

  it('answers 404 elsewhere and 405 to other methods; HEAD works', async () => {
    const server = await started();
    assert.equal((await get(server.port, '/')).status, 404);
    assert.equal((await get(server.port, '/healthz', 'POST')).status, 405);
    const head = await get(server.port, '/healthz', 'HEAD');
    assert.equal(head.status, 200);
    assert.equal(head.body, '');
  });

  it('refuses duplicate and malformed check names', async () => {
    const server = new HealthServer({ port: 0, watchdog: false });
    server.addReadinessCheck('caches', () => true);
    assert.throws(() => server.addLivenessCheck('caches', () => true), /already registered/);
    assert.throws(() => server.addLivenessCheck('ping', () => true), /already registered/);
    assert.throws(() => server.addLivenessCheck('Bad Name', () => true), /must be lower case/);
  });

  it('fails /healthz after the event loop stalls', async () => {
    // A stall threshold well above what a loaded machine delays a timer by (CI runs this beside
    // control planes), and a block well above the threshold; real timers, sampled every 20 ms.
    const sampler = new EventLoopSampler({ periodMs: 20, idlePeriodMs: 20 });
    const server = await started({ port: 0, watchdog: { sampler, stallThresholdMs: 1000, windowMs: 60_000 } });
    assert.equal((await get(server.port, '/healthz')).status, 200);
    const until = performance.now() + 1500;
    while (performance.now() < until) {
      // Blocks the event loop, as a runaway synchronous computation would.
    }
    // The first tick after the block records the stall.
    await eventually('the watchdog to record the stall', () => /^event loop stalled for \d+\.\d s/.test(eventloopReason(server)), 5_000, 5);
    const stalled = await get(server.port, '/healthz');
    assert.equal(stalled.status, 500);
    assert.match(stalled.body, /^\[-\]eventloop failed$/m);
    assert.equal((await get(server.port, '/readyz')).status, 500);
  });

  it('keeps /healthz failing for the window after a stall, and recovers once it has passed', async () => {
    // The watchdog's clock and loop are the test's: a stall of 1.5 s, then time moved on to the window's end.
    const clock = new FakeClock();
    const loop = fakeLoop(clock);
    const sampler = new EventLoopSampler({ clock, loopTimes: loop.loopTimes, periodMs: 20, idlePeriodMs: 20 });
    const server = await started({ port: 0, watchdog: { sampler, stallThresholdMs: 1000, windowMs: 2000 } });
    loop.block(1500);
    await clock.step(0); // the tick 1.48 s late, after 1.5 s busy: a stall, recorded at 1500
    assert.equal((await get(server.port, '/healthz')).status, 500);
    assert.match(eventloopReason(server), /^event loop stalled for 1\.5 s/);
    await loop.idle(1999);
    assert.equal((await get(server.port, '/healthz')).status, 500, 'still failing 1 ms before the window ends');
    await loop.idle(1);
    assert.equal((await get(server.port, '/healthz')).status, 200, 'recovered once the window has passed');
  });

  it('says which setting to change when the port is taken', async () => {
    const first = await started();
    const second = new HealthServer({ port: first.port, watchdog: false });
    await assert.rejects(second.start(), (err: unknown) => {
      assert.ok(err instanceof ListenError);
      assert.equal(err.code, 'EADDRINUSE');
      assert.match(
        err.message,
        new RegExp(`port ${first.port} is already in use on all addresses; set HEALTH_PORT \\(--health-port\\) to a free port`),
      );
      return true;
    });
  });

  it('releases the port on close, also with a keep-alive connection open', async () => {
    const server = new HealthServer({ port: 0, watchdog: {} });
    await server.start();
    const port = server.port;
    assert.equal((await get(port, '/healthz')).status, 200);
    const started = performance.now();
    await server.close();
    assert.ok(performance.now() - started < 900, 'an idle keep-alive socket does not delay close');
    await assert.rejects(get(port, '/healthz', 'GET', true), /ECONNREFUSED/);
    // The port is free again: a new server can take it.
    const again = new HealthServer({ port, watchdog: false });
    await again.start();
    await again.close();
    await server.close(); // idempotent
  });
});

describe('metrics server', () => {
  it('serves the registry at the configured path and nothing else', async () => {
    const metrics = createMetrics({ defaultMetrics: false });
    metrics.controller.setMaxConcurrency('echo', 3);
    const server = new MetricsServer({ registry: metrics.registry, port: 0, path: '/custom' });
    await server.start();
    after(() => server.close());
    const r = await get(server.port, '/custom');
    assert.equal(r.status, 200);
    assert.match(String(r.headers['content-type']), /^text\/plain; version=0\.0\.4/);
    assert.match(r.body, /^controller_runtime_max_concurrent_reconciles\{controller="echo"\} 3$/m);
    assert.equal((await get(server.port, '/metrics')).status, 404);
    assert.equal((await get(server.port, '/custom', 'DELETE')).status, 405);
  });

  it('says which setting to change when the port is taken', async () => {
    const registry = createMetrics({ defaultMetrics: false }).registry;
    const first = new MetricsServer({ registry, port: 0 });
    await first.start();
    after(() => first.close());
    await assert.rejects(new MetricsServer({ registry, port: first.port }).start(), /set METRICS_PORT \(--metrics-port\) to a free port/);
  });
});
