/**
 * Node's request-deadline checks run only while a server holds a connection (connectionchecks.ts):
 * with none open its interval is set out of reach, with one open it is back at the limit's, and a
 * request that stops sending its headers is still cut at headersMs.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { connect as connectTcp, type Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { connect as connectTls } from 'node:tls';
import { checkDeadlinesOnlyWithConnections, NODE_CHECKS_LISTENER } from '../../src/observability/connectionchecks.js';
import { HttpListener } from '../../src/observability/http.js';
import { selfSignedCertificate } from '../../src/observability/selfsigned.js';
import { LONGEST_TIMER_MS } from '../../src/runtime/clock.js';
import { eventually } from '../support/eventually.js';

const NEVER_MS = 60_000;

async function listening(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  after(() => {
    // Also when a case failed with its connection open, which close() alone would wait for.
    server.closeAllConnections();
    return new Promise<void>((resolve) => server.close(() => resolve()));
  });
  return (server.address() as { port: number }).port;
}

const interval = (server: Server): number => (server as Server & { connectionsCheckingInterval: number }).connectionsCheckingInterval;

function opened(connect: () => Socket, event: 'connect' | 'secureConnect'): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const socket = connect();
    socket.once(event, () => resolve(socket));
    socket.on('error', reject);
    after(() => socket.destroy());
  });
}

describe("Node's request-deadline checks", () => {
  for (const tls of [false, true]) {
    it(`run only while a connection is open (${tls ? 'HTTPS' : 'HTTP'})`, async () => {
      const options = { headersTimeout: 300, requestTimeout: 600, connectionsCheckingInterval: 300 };
      const server = tls ? createHttpsServer({ ...selfSignedCertificate(), ...options }) : createServer(options);
      assert.equal(
        checkDeadlinesOnlyWithConnections(server, 300),
        true,
        `Node ${process.version} starts its checks in ${NODE_CHECKS_LISTENER}`,
      );
      const port = await listening(server);
      assert.equal(interval(server), LONGEST_TIMER_MS, 'none open: out of reach');
      const socket = await (tls
        ? opened(() => connectTls({ port, host: '127.0.0.1', rejectUnauthorized: false }), 'secureConnect')
        : opened(() => connectTcp({ port, host: '127.0.0.1' }), 'connect'));
      await eventually('the checks to run again', () => interval(server) === 300, 5_000, 5);
      socket.destroy();
      await eventually('the checks to stop with the last connection', () => interval(server) === LONGEST_TIMER_MS, 5_000, 5);
    });
  }

  it('still cut a request whose headers stop coming, on a keep-alive connection that was idle', async () => {
    const listener = new HttpListener((_req, res) => void res.end('ok'), undefined, {
      firstRequestMs: NEVER_MS,
      headersMs: 300,
      requestMs: 600,
      idleMs: NEVER_MS,
    });
    await listener.listen({ port: 0, host: '127.0.0.1', setting: 'TEST_PORT', what: 'test server' });
    after(() => listener.close());
    const socket = await opened(() => connectTcp({ port: listener.port, host: '127.0.0.1' }), 'connect');
    let received = '';
    socket.on('data', (d: Buffer) => (received += d.toString('utf8')));
    socket.write('GET / HTTP/1.1\r\nHost: test\r\n\r\n');
    await eventually('the first response', () => /\r\n\r\nok$/.test(received), 5_000, 5);
    socket.write('GET / HTTP/1.1\r\nHost: te'); // and nothing more
    const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
    await eventually('the connection to be closed at the headers deadline', () => socket.closed, 5_000, 10);
    await closed;
    assert.match(received, /HTTP\/1\.1 408 Request Timeout/);
  });
});
