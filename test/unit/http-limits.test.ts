/**
 * Endpoints no client can exhaust (issue 32): the metrics and probe servers close a connection
 * that sends nothing (plain, TLS before its ClientHello, TLS after its handshake), close a
 * keep-alive connection left idle, refuse new connections past their caps while keeping the open
 * ones, and still serve a normal request. The limits are shortened through options; every wait
 * is on a socket event or a condition, with a deadline below Node's own defaults (5 s keep-alive,
 * 120 s TLS handshake, none for a silent connection), so each case fails without the limits.
 */
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { connect as connectTcp, type AddressInfo, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { connect as connectTls } from 'node:tls';
import { ConnectionGuard, connectionLimits, type ConnectionLimits } from '../../src/observability/connectionlimits.js';
import { HealthServer } from '../../src/observability/health.js';
import { HttpListener, type Handler, type TlsPair } from '../../src/observability/http.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { MetricsServer } from '../../src/observability/metricsserver.js';
import { selfSignedCertificate } from '../../src/observability/selfsigned.js';

/** Longer than any shortened limit below, shorter than every default of Node's that would close the socket too. */
const WITHIN_MS = 3_000;
/** A limit that a case does not exercise: out of the way. */
const NEVER_MS = 60_000;

const pair: TlsPair = selfSignedCertificate();

async function listening(limits: Partial<ConnectionLimits>, tls?: TlsPair): Promise<HttpListener> {
  return listeningWith(
    (req, res) => {
      const delayMs = Number(new URL(req.url ?? '/', 'http://test').searchParams.get('delay') ?? 0);
      setTimeout(() => res.end('ok'), delayMs); // a slow handler, on request: the workload, not a wait
    },
    limits,
    tls,
  );
}

/** A listener on a free loopback port with `handler`, closed after the test. */
async function listeningWith(handler: Handler, limits: Partial<ConnectionLimits>, tls?: TlsPair): Promise<HttpListener> {
  const listener = new HttpListener(handler, tls, limits);
  await listener.listen({ port: 0, host: '127.0.0.1', setting: 'TEST_PORT', what: 'test server' });
  after(() => listener.close());
  return listener;
}

/** A TCP connection that sends nothing; resolves once connected. */
function silent(port: number, localAddress?: string): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectTcp({ port, host: '127.0.0.1', localAddress }, () => resolve(socket));
    socket.on('error', reject);
    after(() => socket.destroy());
  });
}

/** Resolves with the ms until `socket` closed; rejects when it is still open after withinMs. */
function closedWithin(socket: Socket, withinMs = WITHIN_MS): Promise<number> {
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    // A refused connection may end in a reset: an error is a way of closing here.
    socket.on('error', () => undefined);
    if (socket.closed) return resolve(0);
    const timer = setTimeout(() => reject(new Error(`the connection is still open after ${withinMs} ms`)), withinMs);
    socket.once('close', () => {
      clearTimeout(timer);
      resolve(performance.now() - t0);
    });
  });
}

/** Sends one keep-alive GET on `socket` and resolves with the raw response head and body once complete. */
function exchange(socket: Socket, path = '/'): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    const onData = (d: Buffer): void => {
      text += d.toString('utf8');
      if (/\r\n\r\nok$/.test(text)) {
        socket.off('data', onData);
        resolve(text);
      }
    };
    socket.on('data', onData);
    socket.once('close', () => reject(new Error(`closed before a whole response: ${JSON.stringify(text)}`)));
    socket.write(`GET ${path} HTTP/1.1\r\nHost: test\r\nConnection: keep-alive\r\n\r\n`);
  });
}

/** `n` keep-alive connections that have each been served one request (so the server holds them open). */
async function servedConnections(port: number, n: number, tls = false): Promise<Socket[]> {
  const sockets: Socket[] = [];
  for (let i = 0; i < n; i++) {
    const socket = tls ? await handshaken(port) : await silent(port);
    assert.match(await exchange(socket), /^HTTP\/1.1 200/);
    sockets.push(socket);
  }
  return sockets;
}

/** A TLS connection past its handshake; resolves once secure. */
function handshaken(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connectTls({ port, host: '127.0.0.1', rejectUnauthorized: false }, () => resolve(socket));
    socket.on('error', reject);
    after(() => socket.destroy());
  });
}

describe('connection limits of the metrics and probe servers', () => {
  it('closes a TCP connection that sends nothing at the first-request deadline (probe server)', async () => {
    const health = new HealthServer({ port: 0, host: '127.0.0.1', watchdog: false, connectionLimits: { firstRequestMs: 200 } });
    await health.start();
    after(() => health.close());
    const ms = await closedWithin(await silent(health.port));
    assert.ok(ms >= 150, `closed after ${ms} ms, before its deadline`);
  });

  it('closes a TLS connection that never sends a ClientHello at the handshake deadline (metrics server)', async () => {
    const metrics = new MetricsServer({
      registry: createMetrics({ defaultMetrics: false }).registry,
      port: 0,
      host: '127.0.0.1',
      tls: pair,
      connectionLimits: { handshakeMs: 200, firstRequestMs: NEVER_MS },
    });
    await metrics.start();
    after(() => metrics.close());
    await closedWithin(await silent(metrics.port));
  });

  it('closes a TLS connection that completes its handshake but sends no request, counted from the accept', async () => {
    const listener = await listening({ firstRequestMs: 300, handshakeMs: NEVER_MS }, pair);
    await closedWithin(await handshaken(listener.port));
  });

  it('closes a keep-alive connection idle past the idle timeout, after serving it', async () => {
    const listener = await listening({ idleMs: 300, firstRequestMs: NEVER_MS });
    const socket = await silent(listener.port);
    assert.match(await exchange(socket), /^HTTP\/1.1 200/);
    await closedWithin(socket);
  });

  it('past the cap refuses a new connection and keeps the open ones, which are still served', async () => {
    const listener = await listening({ maxConnections: 3, firstRequestMs: NEVER_MS });
    // Waiting for their first request (an idle one could give its place to its client's newcomer).
    const open = [await silent(listener.port), await silent(listener.port), await silent(listener.port)];
    await closedWithin(await silent(listener.port));
    for (const socket of open) assert.match(await exchange(socket), /^HTTP\/1.1 200/);
  });

  it('past the cap per address refuses that address a new connection, and another address is served', async () => {
    const listener = await listening({ maxConnections: 10, maxConnectionsPerAddress: 2, firstRequestMs: NEVER_MS });
    const open = await servedConnections(listener.port, 2);
    await closedWithin(await silent(listener.port));
    const other = await silent(listener.port, '127.0.0.2');
    assert.match(await exchange(other), /^HTTP\/1.1 200/);
    for (const socket of open) assert.match(await exchange(socket), /^HTTP\/1.1 200/);
  });

  it('a full server admits an address holding none by closing the oldest connection not in a request of the address holding most', async () => {
    const listener = await listening({ maxConnections: 4, maxConnectionsPerAddress: 4, firstRequestMs: NEVER_MS });
    const flood = await servedConnections(listener.port, 1);
    for (let i = 0; i < 3; i++) flood.push(await silent(listener.port));
    // Accepted in order: once the newcomer is served, every flood connection was the server's first.
    const kubelet = await silent(listener.port, '127.0.0.2');
    assert.match(await exchange(kubelet), /^HTTP\/1.1 200/);
    await closedWithin(flood[0]!);
    for (const socket of flood.slice(1)) assert.match(await exchange(socket), /^HTTP\/1.1 200/, 'only the oldest was closed');
  });

  it("a full server admits a client's new connection in place of that client's idle one", async () => {
    const listener = await listening({ maxConnections: 2, maxConnectionsPerAddress: 2, firstRequestMs: NEVER_MS });
    const [idle] = await servedConnections(listener.port, 1);
    const waiting = await silent(listener.port, '127.0.0.2');
    const fresh = await silent(listener.port);
    assert.match(await exchange(fresh), /^HTTP\/1.1 200/);
    await closedWithin(idle!);
    assert.match(await exchange(waiting), /^HTTP\/1.1 200/, 'the other address kept its connection');
  });

  it('a full server refuses an address that would hold as many as the most-holding one', async () => {
    const listener = await listening({ maxConnections: 4, maxConnectionsPerAddress: 4, firstRequestMs: NEVER_MS });
    const open: Socket[] = [];
    for (const address of ['127.0.0.1', '127.0.0.1', '127.0.0.2', '127.0.0.2']) open.push(await silent(listener.port, address));
    await closedWithin(await silent(listener.port, '127.0.0.2'));
    await closedWithin(await silent(listener.port));
    for (const socket of open) assert.match(await exchange(socket), /^HTTP\/1.1 200/);
  });

  it('a full server never closes a connection in a request to make room', async () => {
    const arrived: (() => void)[] = [];
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const listener = new HttpListener(
      async (_req, res) => {
        arrived.shift()?.();
        await released;
        res.end('ok');
      },
      undefined,
      { maxConnections: 2, maxConnectionsPerAddress: 2, firstRequestMs: NEVER_MS },
    );
    await listener.listen({ port: 0, host: '127.0.0.1', setting: 'TEST_PORT', what: 'test server' });
    after(() => listener.close());
    const busy: Promise<string>[] = [];
    for (let i = 0; i < 2; i++) {
      const inRequest = new Promise<void>((resolve) => arrived.push(resolve));
      busy.push(exchange(await silent(listener.port)));
      await inRequest;
    }
    await closedWithin(await silent(listener.port, '127.0.0.2'));
    release();
    for (const response of busy) assert.match(await response, /^HTTP\/1.1 200/);
  });

  it('serves a normal request slower than the first-request deadline, and advertises the idle timeout', async () => {
    const listener = await listening({ firstRequestMs: 200, idleMs: 3_000 });
    const socket = await silent(listener.port);
    const response = await exchange(socket, '/?delay=600');
    assert.match(response, /^HTTP\/1.1 200/);
    assert.match(response, /\r\nKeep-Alive: timeout=3\r\n/i);
    assert.match(await exchange(socket), /^HTTP\/1.1 200/, 'the connection is reused after the first-request deadline');
  });

  it('closes a connection that pipelines a request while its response is unfinished, and serves only the first', async () => {
    let handled = 0;
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    const listener = await listeningWith(
      async (_req, res) => {
        handled++;
        await released;
        res.end('ok');
      },
      { firstRequestMs: NEVER_MS },
    );
    const socket = await silent(listener.port);
    socket.write('GET /1 HTTP/1.1\r\nHost: test\r\n\r\nGET /2 HTTP/1.1\r\nHost: test\r\n\r\n');
    await closedWithin(socket);
    release();
    assert.equal(handled, 1);
  });

  it('a pipelining client that never reads gets one request served and its connection closed, whatever it sent', async () => {
    let handled = 0;
    const listener = await listeningWith(
      (_req, res) => {
        handled++;
        res.end('ok');
      },
      { firstRequestMs: NEVER_MS },
    );
    const socket = await silent(listener.port);
    socket.pause(); // never reads: its responses can only pile up on the server
    socket.on('error', () => undefined);
    const request = 'GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n';
    socket.write(request.repeat(20_000));
    await closedWithin(socket);
    assert.equal(handled, 1, `${handled} pipelined requests were served on one connection`);
  });

  it("stops Node's parser at a pipelined request: the rest of the read never becomes requests", async () => {
    const server = createHttpServer((_req, res) => res.end('ok'));
    new ConnectionGuard(server, connectionLimits({ firstRequestMs: NEVER_MS }));
    let parsed = 0;
    server.prependListener('request', () => parsed++); // before the guard's: sees every request Node emits
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    after(() => server.close());
    const socket = await silent((server.address() as AddressInfo).port);
    socket.resume(); // reads (and drops) the first response, so it sees the close
    socket.write('GET /healthz HTTP/1.1\r\nHost: test\r\n\r\n'.repeat(1_000));
    await closedWithin(socket);
    assert.equal(parsed, 1, `${parsed} requests were parsed on a connection closed at its second`);
  });

  it('a keep-alive connection is served request after request when it waits for each response', async () => {
    const listener = await listening({ firstRequestMs: NEVER_MS });
    const socket = await silent(listener.port);
    for (let i = 0; i < 5; i++) assert.match(await exchange(socket), /^HTTP\/1.1 200/);
  });

  it('close() is not held by a connection still in its TLS handshake', async () => {
    const listener = await listening({ firstRequestMs: NEVER_MS, handshakeMs: NEVER_MS }, pair);
    const socket = await silent(listener.port);
    // Accepted in order: once a later connection is served, the silent one is the server's too.
    await servedConnections(listener.port, 1, true);
    const closing = listener.close();
    await closedWithin(socket);
    await Promise.race([
      closing,
      new Promise((_, reject) => setTimeout(() => reject(new Error('close() still pending')), WITHIN_MS).unref()),
    ]);
  });
});
