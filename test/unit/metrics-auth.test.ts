/**
 * The metrics endpoint's access check (TokenReview, then SubjectAccessReview) against a stand-in
 * API server: 401 / 403 / 200, what is sent for review, the cache (hits cost no review, TTLs on a
 * fake clock, the bound, shared in-flight reviews), failures that never let a scrape through, and
 * that no token reaches a log line.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { V1SubjectAccessReview } from '@kubernetes/client-node';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/kube/errors.js';
import type { RequestOpts } from '../../src/kube/rest.js';
import { DecisionCache } from '../../src/observability/decisioncache.js';
import { MetricsAuth, type ReviewApi } from '../../src/observability/metricsauth.js';
import type { Logger } from '../../src/runtime/log.js';
import { FakeClock } from '../../src/runtime/testing/clock.js';

interface Call {
  method: string;
  path: string;
  body: unknown;
  timeoutMs?: number;
}

/** Tokens it knows: token -> user; users allowed to get /metrics. */
function fakeApi(users: Record<string, string>, allowed: string[]): ReviewApi & { calls: Call[]; fail?: Error; gate?: Promise<void> } {
  const api = {
    calls: [] as Call[],
    fail: undefined as Error | undefined,
    gate: undefined as Promise<void> | undefined,
    async request<T>(method: string, path: string, opts: RequestOpts = {}): Promise<T> {
      api.calls.push({ method, path, body: opts.body, timeoutMs: opts.timeoutMs });
      if (api.gate) await api.gate;
      if (api.fail) throw api.fail;
      // Either review: a TokenReview's spec has the token, a SubjectAccessReview's the user.
      const body = opts.body as { spec: { token?: string; user?: string } };
      if (path.endsWith('/tokenreviews')) {
        const user = users[body.spec.token ?? ''];
        return {
          status: user
            ? { authenticated: true, user: { username: user, uid: `uid-${user}`, groups: ['g'] } }
            : { error: 'invalid bearer token' },
        } as T;
      }
      return {
        status: { allowed: allowed.includes(body.spec.user ?? ''), reason: allowed.includes(body.spec.user ?? '') ? 'bound' : '' },
      } as T;
    },
  };
  return api;
}

function req(authorization?: string): IncomingMessage {
  return { headers: authorization === undefined ? {} : { authorization } } as IncomingMessage;
}

function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const log = (msg: string, fields?: Record<string, unknown>): void => void lines.push(`${msg} ${JSON.stringify(fields ?? {})}`);
  const logger = { lines, debug: log, info: log, warn: log, error: log, child: () => logger };
  return logger;
}

const USERS = { 'token-reader': 'system:serviceaccount:monitoring:prometheus', 'token-nobody': 'system:serviceaccount:default:nobody' };
const ALLOWED = ['system:serviceaccount:monitoring:prometheus'];

describe('metrics access: TokenReview then SubjectAccessReview', () => {
  it('answers 401 without a bearer token, without asking the API server', async () => {
    const api = fakeApi(USERS, ALLOWED);
    const auth = new MetricsAuth({ api, path: '/metrics' });
    for (const header of [undefined, '', 'Basic dXNlcjpwYXNz', 'Bearer', 'Bearer  ']) {
      assert.equal((await auth.check(req(header))).status, 401, String(header));
    }
    assert.equal(api.calls.length, 0);
  });

  it('answers 401 for a token the API server does not accept, 403 without the right, 200 with it', async () => {
    const api = fakeApi(USERS, ALLOWED);
    const auth = new MetricsAuth({ api, path: '/metrics' });
    assert.equal((await auth.check(req('Bearer not-a-token'))).status, 401);
    const forbidden = await auth.check(req('Bearer token-nobody'));
    assert.equal(forbidden.status, 403);
    assert.match(forbidden.message, /user "system:serviceaccount:default:nobody" may not get \/metrics/);
    const ok = await auth.check(req('bearer token-reader')); // the scheme in any letter case
    assert.deepEqual(ok, { status: 200, message: 'OK', user: 'system:serviceaccount:monitoring:prometheus' });
  });

  it('asks about verb get on the non-resource URL of the metrics path, for the reviewed user, with a short deadline', async () => {
    const api = fakeApi(USERS, ALLOWED);
    await new MetricsAuth({ api, path: '/custom/metrics' }).check(req('Bearer token-reader'));
    assert.deepEqual(
      api.calls.map((c) => `${c.method} ${c.path}`),
      ['POST /apis/authentication.k8s.io/v1/tokenreviews', 'POST /apis/authorization.k8s.io/v1/subjectaccessreviews'],
    );
    assert.deepEqual(api.calls[0]!.body, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: 'token-reader' } });
    assert.deepEqual((api.calls[1]!.body as V1SubjectAccessReview).spec, {
      user: 'system:serviceaccount:monitoring:prometheus',
      uid: 'uid-system:serviceaccount:monitoring:prometheus',
      groups: ['g'],
      extra: undefined,
      nonResourceAttributes: { path: '/custom/metrics', verb: 'get' },
    });
    for (const c of api.calls) assert.ok(c.timeoutMs !== undefined && c.timeoutMs <= 5_000, `deadline ${c.timeoutMs}`);
  });

  it('caches decisions: repeated scrapes cost no review; allowed for 2 min, denied for 30 s (fake clock)', async () => {
    const clock = new FakeClock();
    const api = fakeApi(USERS, ALLOWED);
    const auth = new MetricsAuth({ api, path: '/metrics', now: () => clock.now() });
    for (let i = 0; i < 100; i++) assert.equal((await auth.check(req('Bearer token-reader'))).status, 200);
    for (let i = 0; i < 100; i++) assert.equal((await auth.check(req('Bearer token-nobody'))).status, 403);
    assert.equal(api.calls.length, 4, 'one TokenReview and one SubjectAccessReview per token');

    await clock.step(30_000);
    await auth.check(req('Bearer token-reader'));
    await auth.check(req('Bearer token-nobody'));
    assert.equal(api.calls.length, 6, 'the denial expired after 30 s, the grant did not');

    await clock.step(90_000);
    await auth.check(req('Bearer token-reader'));
    assert.equal(api.calls.length, 8, 'the grant expired after 2 min');
  });

  it('shares one pair of reviews between concurrent scrapes with the same token', async () => {
    const api = fakeApi(USERS, ALLOWED);
    let open!: () => void;
    api.gate = new Promise((r) => (open = r));
    const auth = new MetricsAuth({ api, path: '/metrics' });
    const scrapes = Array.from({ length: 20 }, () => auth.check(req('Bearer token-reader')));
    open();
    assert.deepEqual(new Set((await Promise.all(scrapes)).map((o) => o.status)), new Set([200]));
    assert.equal(api.calls.length, 2);
  });

  it('answers 503 when the API server is unreachable or throttles, 500 when the operator may not review; never caches a failure', async () => {
    const api = fakeApi(USERS, ALLOWED);
    const auth = new MetricsAuth({ api, path: '/metrics' });
    api.fail = new ApiError(0, 'TransportError', 'POST /apis/authentication.k8s.io/v1/tokenreviews: connect ECONNREFUSED');
    assert.equal((await auth.check(req('Bearer token-reader'))).status, 503);
    api.fail = new ApiError(429, 'TooManyRequests', 'slow down');
    assert.equal((await auth.check(req('Bearer token-reader'))).status, 503);
    api.fail = new ApiError(403, 'Forbidden', 'cannot create resource "tokenreviews"');
    const denied = await auth.check(req('Bearer token-reader'));
    assert.equal(denied.status, 500);
    api.fail = undefined;
    assert.equal((await auth.check(req('Bearer token-reader'))).status, 200, 'asked again once the API server answers');
  });

  it('never writes a token into a log line', async () => {
    const logger = recordingLogger();
    const api = fakeApi(USERS, ALLOWED);
    const auth = new MetricsAuth({ api, path: '/metrics', logger });
    await auth.check(req('Bearer not-a-token'));
    await auth.check(req('Bearer token-nobody'));
    api.fail = new ApiError(500, 'InternalError', 'boom');
    await auth.check(req('Bearer token-reader-2'));
    assert.ok(logger.lines.length >= 3, logger.lines.join('\n'));
    for (const line of logger.lines) assert.doesNotMatch(line, /token-|not-a-token/);
  });
});

describe('DecisionCache', () => {
  const make = (clock: FakeClock, maxEntries = 3): DecisionCache<string> =>
    new DecisionCache<string>({ ttlMs: (v) => (v.startsWith('allow') ? 120_000 : 30_000), maxEntries, now: () => clock.now() });

  it('holds at most maxEntries, dropping the least recently used', async () => {
    const clock = new FakeClock();
    const cache = make(clock);
    let computed = 0;
    const get = (k: string): Promise<string> => cache.get(k, async () => (computed++, `allow-${k}`));
    for (const k of ['a', 'b', 'c']) await get(k);
    await get('a'); // a is now the most recently used
    await get('d'); // pushes out b
    assert.equal(cache.size, 3);
    assert.equal(computed, 4);
    await get('a');
    await get('c');
    assert.equal(computed, 4, 'a and c stayed');
    await get('b');
    assert.equal(computed, 5, 'b was dropped');
  });

  it('bounds a flood of distinct keys (1,000 by default in the filter)', async () => {
    const clock = new FakeClock();
    const cache = make(clock, 1_000);
    for (let i = 0; i < 5_000; i++) await cache.get(`k${i}`, async () => 'deny');
    assert.equal(cache.size, 1_000);
  });

  it('does not keep a failed computation', async () => {
    const cache = make(new FakeClock());
    await assert.rejects(
      cache.get('k', async () => {
        throw new Error('down');
      }),
      /down/,
    );
    assert.equal(cache.size, 0);
    assert.equal(await cache.get('k', async () => 'allow'), 'allow');
  });
});
