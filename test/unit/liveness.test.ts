import assert from 'node:assert/strict';
import { test } from 'node:test';
import { informerLiveness } from '../../src/runtime/informer/index.js';
import { HealthServer } from '../../src/observability/health.js';

test('/healthz fails once an informer has stopped for good; the reason (for the log) names it', async (t) => {
  const informers = [
    { name: 'echos', state: 'running' },
    { name: 'jobs', state: 'running' },
  ];
  const shutdown = new AbortController();
  const health = new HealthServer({ port: 0, host: '127.0.0.1', watchdog: false });
  health.addLivenessCheck('informers', () => informerLiveness(informers, shutdown.signal));
  await health.start();
  t.after(() => health.close());
  const url = `http://127.0.0.1:${health.port}/healthz?verbose`;
  assert.equal((await fetch(url)).status, 200);

  informers[1]!.state = 'failed';
  const res = await fetch(url);
  assert.equal(res.ok, false);
  assert.match(await res.text(), /^\[-\]informers failed$/m);
  // Which informer, and why: for the log, not for the anonymous probe.
  assert.match(String(health.evaluate('healthz').checks.find((c) => c.name === 'informers')?.reason), /jobs \(failed\)/);

  // During shutdown informers stop on purpose: that is not a reason to restart the pod.
  shutdown.abort();
  assert.equal((await fetch(url)).status, 200);
});
