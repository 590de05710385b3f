/**
 * RestClient's retries of "come back later" answers (client-go's checkWait), against a local
 * HTTP server that answers as the API server does when it sheds load: plain text with only a
 * Retry-After header (API Priority and Fairness), or a Status body.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { after, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiError } from '../../src/kube/errors.js';
import { RestClient } from '../../src/kube/rest.js';
import { MAX_RETRIES, MAX_WAIT_MS, retryAfterMs } from '../../src/kube/retry.js';

type Reply = { status: number; headers?: Record<string, string>; body?: string };

async function server(replies: (n: number) => Reply): Promise<{ url: string; hits: () => number; srv: Server }> {
  let n = 0;
  const srv = createServer((req, res) => {
    req.resume();
    const r = replies(n++);
    res.writeHead(r.status, { 'content-type': 'text/plain', ...r.headers });
    res.end(r.body ?? '');
  });
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  after(() => srv.close());
  return { url: `http://127.0.0.1:${(srv.address() as { port: number }).port}`, hits: () => n, srv };
}

function client(url: string, sleeps: number[], opts: { sleep?: (ms: number, signal: AbortSignal) => Promise<void> } = {}) {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: url, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const counted: string[] = [];
  const retried: string[] = [];
  const rest = new RestClient(kc, {
    metrics: {
      requestDone: (code, method) => counted.push(`${method} ${code}`),
      retried: (code, method) => retried.push(`${method} ${code}`),
    },
    sleep: opts.sleep ?? (async (ms) => void sleeps.push(ms)),
  });
  after(() => rest.close());
  return { rest, counted, retried };
}

describe('retryAfterMs (client-go checkWait)', () => {
  it('retries a 429 or 5xx that carries Retry-After, in seconds, bounded', () => {
    assert.equal(retryAfterMs(429, '2'), 2000);
    assert.equal(retryAfterMs(503, '1'), 1000);
    assert.equal(retryAfterMs(429, undefined, 3), 3000, 'Status details when the header is absent');
    assert.equal(retryAfterMs(429, '100000'), MAX_WAIT_MS);
    assert.equal(retryAfterMs(429, undefined), undefined, 'no Retry-After: the caller backs off');
    assert.equal(retryAfterMs(500, undefined), undefined);
    assert.equal(retryAfterMs(409, '1'), undefined, 'only 429 and 5xx');
    assert.equal(retryAfterMs(429, 'Wed, 21 Oct 2026 07:28:00 GMT'), undefined, 'no HTTP dates, as client-go');
  });
});

describe('RestClient retries', () => {
  it('retries a plain-text 429 with Retry-After as told, then returns the answer, counting each attempt', async () => {
    const s = await server((n) =>
      n < 3
        ? { status: 429, headers: { 'retry-after': '1' }, body: 'Too many requests, please try again later.\n' }
        : { status: 200, body: '{"ok":true}' },
    );
    const sleeps: number[] = [];
    const c = client(s.url, sleeps);
    const hitsAtSend: number[] = [];
    assert.deepEqual(await c.rest.request('PATCH', '/x', { body: {}, onSend: () => hitsAtSend.push(s.hits()) }), { ok: true });
    assert.equal(s.hits(), 4);
    assert.deepEqual(hitsAtSend, [0, 1, 2, 3], 'onSend runs before each attempt reaches the server');
    assert.deepEqual(sleeps, [1000, 1000, 1000]);
    assert.deepEqual(c.retried, ['PATCH 429', 'PATCH 429', 'PATCH 429']);
    assert.deepEqual(c.counted, ['PATCH 429', 'PATCH 429', 'PATCH 429', 'PATCH 200']);
  });

  it(`gives up after ${MAX_RETRIES} retries with the server's 429`, async () => {
    const s = await server(() => ({ status: 429, headers: { 'retry-after': '0' }, body: 'slow down' }));
    const c = client(s.url, []);
    await assert.rejects(c.rest.request('GET', '/x'), (err: ApiError) => err.code === 429 && /slow down/.test(err.message));
    assert.equal(s.hits(), MAX_RETRIES + 1);
  });

  it('does not retry a 500 without Retry-After, nor a 409', async () => {
    const s = await server((n) => ({ status: n === 0 ? 500 : 409, body: '{"kind":"Status","reason":"Conflict","code":409}' }));
    const c = client(s.url, []);
    await assert.rejects(c.rest.request('GET', '/x'), (err: ApiError) => err.code === 500);
    await assert.rejects(c.rest.request('GET', '/x'), (err: ApiError) => err.code === 409);
    assert.equal(s.hits(), 2);
    assert.deepEqual(c.retried, []);
  });

  it('retries a 503 with Retry-After', async () => {
    const s = await server((n) => (n === 0 ? { status: 503, headers: { 'retry-after': '2' } } : { status: 200, body: '{}' }));
    const sleeps: number[] = [];
    const c = client(s.url, sleeps);
    await c.rest.request('GET', '/x');
    assert.deepEqual(sleeps, [2000]);
  });

  it('a wait is cut short by the caller: the request fails at once with the server answer', async () => {
    const s = await server(() => ({ status: 429, headers: { 'retry-after': '60' } }));
    const stop = new AbortController();
    const c = client(s.url, [], {
      sleep: (_ms, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason), { once: true });
          stop.abort(new Error('shutting down'));
        }),
    });
    await assert.rejects(c.rest.request('GET', '/x', { signal: stop.signal }), (err: ApiError) => err.code === 429);
    assert.equal(s.hits(), 1);
  });
});
