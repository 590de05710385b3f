/**
 * Sockets and addresses (issue 13, defect 10): watch sockets have TCP keep-alive; the probe and
 * metrics servers listen dual-stack.
 */
import assert from 'node:assert/strict';
import { Socket } from 'node:net';
import { after, describe, it } from 'node:test';
import { HealthServer } from '../../src/observability/health.js';
import { localRestClient } from '../support/localapi.js';

describe('sockets', () => {
  it("a watch stream turns TCP keep-alive on (30 s), as client-go's dialer does", async () => {
    const rest = await localRestClient((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"type":"BOOKMARK","object":{}}\n');
    });
    const calls: [boolean | undefined, number | undefined][] = [];
    // eslint-disable-next-line @typescript-eslint/unbound-method -- restored below and called with its socket as `this`
    const original = Socket.prototype.setKeepAlive;
    Socket.prototype.setKeepAlive = function (enable?: boolean, delay?: number) {
      calls.push([enable, delay]);
      return original.call(this, enable, delay);
    };
    try {
      const lines: string[] = [];
      await rest.stream('/apis/x/v1/things', { watch: true }, new AbortController().signal, (l) => lines.push(l));
      assert.equal(lines.length, 1);
    } finally {
      Socket.prototype.setKeepAlive = original;
    }
    assert.ok(
      calls.some(([enable, delay]) => enable === true && delay === 30_000),
      `setKeepAlive calls: ${JSON.stringify(calls)}`,
    );
  });

  it('the probe server answers on IPv6 and IPv4 loopback alike when no host is set', async () => {
    const health = new HealthServer({ port: 0, watchdog: false });
    await health.start();
    after(() => health.close());
    const probe = (host: string) => fetch(`http://${host}:${health.port}/healthz`).then((r) => r.status);
    assert.equal(await probe('127.0.0.1'), 200);
    const v6 = await probe('[::1]');
    assert.equal(v6, 200, 'IPv6 clients reach it too');
  });
});
