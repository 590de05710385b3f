/**
 * Deadlines hold through proxies (issue 20, item 3): a proxy that accepts connections and never
 * answers must not outlive a request's deadline or a watch's signal, and a request aborted before
 * it has a socket settles at once. Real listeners (net.createServer) that accept and say nothing;
 * each test checks that the listener saw its connection closed, so nothing is left open.
 */
import assert from 'node:assert/strict';
import type { Agent } from 'node:https';
import { createServer, type Server, type Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { ApiError } from '../../src/kube/errors.js';
import { Reachability } from '../../src/kube/reachability.js';
import { RestClient, type RestClientOptions } from '../../src/kube/rest.js';
import { eventually, within } from '../support/eventually.js';

/** A TCP listener that accepts and never writes a byte; resolves `closed` per connection once the peer closes it. */
async function silentListener(t: TestContext): Promise<{ port: number; accepted: Socket[]; allClosed(): Promise<void> }> {
  const accepted: Socket[] = [];
  const closed: Promise<void>[] = [];
  const server: Server = createServer((socket) => {
    accepted.push(socket);
    closed.push(new Promise((resolve) => socket.once('close', () => resolve())));
    socket.on('error', () => undefined);
    // Reads what comes (a CONNECT, a SOCKS greeting, a TLS hello) and never answers.
    socket.resume();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of accepted) s.destroy();
    server.close();
  });
  return {
    port: (server.address() as { port: number }).port,
    accepted,
    allClosed: async () => {
      await Promise.all(closed);
    },
  };
}

function client(t: TestContext, server: string, proxyUrl?: string, options: RestClientOptions = {}): RestClient {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server, skipTLSVerify: true, ...(proxyUrl ? { proxyUrl } : {}) }],
    users: [{ name: 'u', token: 'secret-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const rest = new RestClient(kc, { env: {}, ...options });
  t.after(() => rest.close());
  return rest;
}

/** Rejects naming `what` if `p` has not settled after `ms` (a hang, not a timing assertion). */
function settlesWithin<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  return within(what, p, ms);
}

/**
 * The request's deadline in the proxy tests: long enough that the tunnel's connection is made
 * before it on a loaded machine (at 300 ms, under load 8, the deadline came first and the message
 * named the deadline, not the proxy that did not answer).
 */
const TUNNEL_DEADLINE_MS = 1_500;

describe('deadlines through a proxy that accepts and never answers', () => {
  for (const scheme of ['http', 'socks5'] as const) {
    it(`${scheme}: the request rejects at its deadline naming the proxy, and the tunnel is closed`, async (t) => {
      const proxy = await silentListener(t);
      const rest = client(t, 'https://api.example:6443', `${scheme}://127.0.0.1:${proxy.port}`);
      const err = await settlesWithin(
        rest.request('GET', '/api', { timeoutMs: TUNNEL_DEADLINE_MS }).then(
          () => assert.fail('no answer can come'),
          (e: unknown) => e,
        ),
        10_000,
        'the request',
      );
      assert.ok(err instanceof ApiError, String(err));
      assert.equal(err.code, 0);
      const expected = scheme === 'http' ? 'did not answer CONNECT' : 'did not answer';
      assert.match(
        err.message,
        new RegExp(`^GET /api: ${scheme === 'http' ? '' : 'socks5 '}proxy 127\\.0\\.0\\.1:${proxy.port} ${expected}`),
      );
      assert.match(err.message, new RegExp(`within ${TUNNEL_DEADLINE_MS} ms`));
      // The proxy's accept is an event of this process: on a loaded machine the deadline can come first.
      await eventually('the proxy to accept the tunnel', () => proxy.accepted.length > 0, 10_000, 10);
      assert.equal(proxy.accepted.length, 1, 'one tunnel was tried');
      await settlesWithin(proxy.allClosed(), 10_000, 'the close of the tunnel socket');
    });
  }

  it("a watch's tunnel ends with the caller's signal", async (t) => {
    const proxy = await silentListener(t);
    const rest = client(t, 'https://api.example:6443', `http://127.0.0.1:${proxy.port}`);
    const stop = new AbortController();
    const watching = rest.stream('/api/v1/pods', { watch: true }, stop.signal, () => assert.fail('no event can come'));
    await eventually('the tunnel', () => proxy.accepted.length > 0, 10_000, 10);
    stop.abort(new Error('informer stopping'));
    await settlesWithin(
      watching.catch(() => undefined),
      10_000,
      'the watch',
    );
    await settlesWithin(proxy.allClosed(), 10_000, 'the close of the tunnel socket');
  });
});

describe('a request aborted before it has a socket', () => {
  it('settles at once, though every socket of the pool is taken', async (t) => {
    // The only socket of the pool hangs in its TLS handshake with a server that never answers.
    const api = await silentListener(t);
    const rest = client(t, `https://127.0.0.1:${api.port}`, undefined, { maxSockets: 1 });
    const first = rest.request('GET', '/api/first', { timeoutMs: 60_000 }).catch((err: unknown) => err);
    await eventually('the first connection', () => api.accepted.length > 0, 10_000, 10);
    const stop = new AbortController();
    const queued = rest.request('GET', '/api/second', { signal: stop.signal, timeoutMs: 60_000 });
    // Past authentication, in the agent's queue of requests waiting for a socket.
    const pool = (rest as unknown as { agent: Agent }).agent;
    await eventually('the second request to queue for a socket', () => Object.values(pool.requests).flat().length > 0, 10_000, 5);
    stop.abort(new Error('caller gave up'));
    await settlesWithin(
      assert.rejects(queued, (err: ApiError) => err.code === 0 && /caller gave up/.test(err.message)),
      5_000,
      'the aborted request',
    );
    assert.equal(api.accepted.length, 1, 'the queued request never had a socket');
    rest.close();
    await first;
  });
});

describe('reachability (the evidence for the apiserver liveness check)', () => {
  it('counts time without any answer while requests fail or wait; an answer of any status resets it', () => {
    let now = 0;
    const r = new Reachability(() => now);
    assert.equal(r.unreachableMs(100), 0, 'nothing failed yet');
    r.started();
    now = 10;
    r.failed('GET /api: timed out after 10 ms');
    r.ended();
    now = 50;
    assert.equal(r.unreachableMs(100), 40);
    assert.match(r.lastError, /timed out/);
    r.started(); // a request waiting (e.g. on a silent tunnel) is a request being made
    now = 500;
    assert.equal(r.unreachableMs(100), 490);
    r.answered(); // a 500 or a 429 is an answer too
    r.ended();
    assert.equal(r.unreachableMs(100), 0);
    assert.equal(r.lastError, '');
  });

  it('says nothing once nobody has asked for longer than the bound', () => {
    let now = 0;
    const r = new Reachability(() => now);
    r.started();
    r.failed('connection refused');
    r.ended();
    now = 99;
    assert.equal(r.unreachableMs(100), 99);
    now = 100;
    assert.equal(r.unreachableMs(100), 0, 'no request in flight and none failed within the bound');
  });

  it('a RestClient records a refused connection as no answer, and a stop by its caller as nothing', async (t) => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as { port: number }).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    let now = 0;
    const rest = client(t, `https://127.0.0.1:${port}`, undefined, { now: () => now });
    const stop = new AbortController();
    stop.abort(new Error('stopping'));
    await assert.rejects(rest.request('GET', '/api', { signal: stop.signal }));
    assert.equal(rest.reachability.lastError, '', 'stopped by its caller: no evidence');
    await assert.rejects(rest.request('GET', '/api', { timeoutMs: 5_000 }), /ECONNREFUSED/);
    now = 1_000;
    assert.equal(rest.reachability.unreachableMs(60_000), 1_000);
    assert.match(rest.reachability.lastError, /ECONNREFUSED/);
  });
});
