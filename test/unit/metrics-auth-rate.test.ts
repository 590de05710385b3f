/**
 * A flood of random tokens (issue 44, item 2): refusals are cached apart from approvals, so they
 * never push out the scraper's; reviews of new tokens are limited per second, overall and per
 * client address, and a refused scrape is 429 at once; the renewal of an approval is not limited;
 * the scraper with a valid token gets 200 all through the flood. Time is a fake clock; the stand-in
 * API server answers at once (the token "good" is the scraper's, "slow-*" tokens hang until released, everything else is not authenticated).
 */
import assert from 'node:assert/strict';
import type { IncomingMessage } from 'node:http';
import type { Socket } from 'node:net';
import { describe, it } from 'node:test';
import type { RequestOpts } from '../../src/kube/rest.js';
import { DecisionCache } from '../../src/observability/decisioncache.js';
import { MetricsAuth, type AuthOutcome, type ReviewApi } from '../../src/observability/metricsauth.js';
import { REVIEW_RATE } from '../../src/observability/reviewrate.js';
import { FakeClock } from '../../src/runtime/testing/clock.js';

const TOKEN_REVIEWS = '/apis/authentication.k8s.io/v1/tokenreviews';

function scrape(token: string, address = '10.0.0.1'): IncomingMessage {
  return { headers: { authorization: `Bearer ${token}` }, socket: { remoteAddress: address } as Socket } as IncomingMessage;
}

function standIn(): ReviewApi & { tokenReviews(token?: string): number; releaseSlow(): void } {
  const reviewed: string[] = [];
  let release!: () => void;
  let slow = new Promise<void>((resolve) => (release = resolve));
  return {
    tokenReviews: (token) => reviewed.filter((t) => token === undefined || t === token).length,
    releaseSlow: () => {
      release();
      slow = new Promise<void>((resolve) => (release = resolve));
    },
    async request<T>(_method: string, path: string, opts: RequestOpts = {}): Promise<T> {
      const spec = (opts.body as { spec: { token?: string } }).spec;
      if (path !== TOKEN_REVIEWS) return { status: { allowed: true } } as T;
      reviewed.push(spec.token ?? '');
      if (spec.token?.startsWith('slow-')) await slow;
      return {
        status: spec.token === 'good' ? { authenticated: true, user: { username: 'prometheus' } } : { error: 'invalid bearer token' },
      } as T;
    },
  };
}

const statuses = (outcomes: AuthOutcome[]): Record<number, number> => {
  const counts: Record<number, number> = {};
  for (const o of outcomes) counts[o.status] = (counts[o.status] ?? 0) + 1;
  return counts;
};

/** `n` scrapes one after another (at once they would be refused for want of a review slot). */
async function inTurn(n: number, check: (i: number) => Promise<AuthOutcome>): Promise<AuthOutcome[]> {
  const outcomes: AuthOutcome[] = [];
  for (let i = 0; i < n; i++) outcomes.push(await check(i));
  return outcomes;
}

/** As many as the limits could never refuse in these tests. */
const UNLIMITED = { overall: { perSecond: 1e6, burst: 1e6 }, perAddress: { perSecond: 1e6, burst: 1e6 } };

describe('DecisionCache classes', () => {
  it('decisions of one class never push out those of another', async () => {
    const clock = new FakeClock();
    const cache = new DecisionCache<string>({
      ttlMs: () => 60_000,
      classOf: (v) => (v.startsWith('allow') ? 'allowed' : 'denied'),
      maxEntries: 3,
      now: () => clock.now(),
    });
    let computed = 0;
    await cache.get('scraper', async () => (computed++, 'allow'));
    for (let i = 0; i < 50; i++) await cache.get(`flood-${i}`, async () => (computed++, 'deny'));
    assert.equal(computed, 51);
    assert.equal(await cache.get('scraper', async () => (computed++, 'allow')), 'allow');
    assert.equal(computed, 51, 'the approval was still cached');
    assert.equal(cache.size, 4);
  });

  it('hands compute() the expired decision, and keeps it when the new computation fails', async () => {
    const clock = new FakeClock();
    const cache = new DecisionCache<string>({ ttlMs: () => 1_000, maxEntries: 3, now: () => clock.now() });
    await cache.get('k', async () => 'allow');
    await clock.step(1_000);
    const seen: (string | undefined)[] = [];
    await assert.rejects(
      cache.get('k', async (expired) => {
        seen.push(expired);
        throw new Error('down');
      }),
    );
    await cache.get('k', async (expired) => (seen.push(expired), 'allow again'));
    assert.deepEqual(seen, ['allow', 'allow']);
    assert.deepEqual(await cache.get('never', async (expired) => String(expired)), 'undefined');
  });
});

describe('metrics access under a flood of random tokens', () => {
  it("refused tokens, however many, never push out the scraper's approval", async () => {
    const clock = new FakeClock();
    const api = standIn();
    const auth = new MetricsAuth({ api, path: '/metrics', now: () => clock.now(), maxEntries: 10, reviewRate: UNLIMITED });
    assert.equal((await auth.check(scrape('good'))).status, 200);
    const flood = await inTurn(200, (i) => auth.check(scrape(`random-${i}`, `10.1.0.${i % 8}`)));
    assert.deepEqual(statuses(flood), { 401: 200 });
    assert.equal((await auth.check(scrape('good'))).status, 200);
    assert.equal(api.tokenReviews('good'), 1, 'served from the cache, not reviewed again');
  });

  it('a scraper with a valid token gets 200 through a flood that is refused and holds every review slot (the 503s of issue 44)', async () => {
    const clock = new FakeClock();
    const api = standIn();
    const auth = new MetricsAuth({ api, path: '/metrics', now: () => clock.now() });
    assert.equal((await auth.check(scrape('good'))).status, 200);
    // Every second for 100 s, from 8 addresses: 100 random tokens, then 4 whose reviews hang
    // (holding every review slot they get) while the scraper scrapes, every 15 s, from its own.
    const answers: number[] = [];
    for (let second = 0; second < 100; second++) {
      await inTurn(100, (i) => auth.check(scrape(`random-${second}-${i}`, `10.2.0.${i % 8}`)));
      const hanging = Array.from({ length: 4 }, (_, i) => auth.check(scrape(`slow-${second}-${i}`, `10.2.0.${i}`)));
      if (second % 15 === 0) answers.push((await auth.check(scrape('good', '10.9.9.9'))).status);
      api.releaseSlow();
      await Promise.all(hanging);
      await clock.step(1_000);
    }
    assert.deepEqual(answers, [200, 200, 200, 200, 200, 200, 200]);
    assert.equal(api.tokenReviews('good'), 1);
  });

  it(`reviews at most ${REVIEW_RATE.perAddress.burst} new tokens from one address at once, then ${REVIEW_RATE.perAddress.perSecond} a second; the rest are 429 at once`, async () => {
    const clock = new FakeClock();
    const api = standIn();
    const refused: string[] = [];
    const auth = new MetricsAuth({ api, path: '/metrics', now: () => clock.now(), onRefused: (reason) => refused.push(reason) });
    const burst = await inTurn(20, (i) => auth.check(scrape(`random-${i}`)));
    assert.deepEqual(statuses(burst), { 401: REVIEW_RATE.perAddress.burst, 429: 20 - REVIEW_RATE.perAddress.burst });
    const limited = burst.find((o) => o.status === 429)!;
    assert.equal(limited.retryAfterSeconds, 1);
    assert.match(limited.message, /Too Many Requests/);
    assert.equal(api.tokenReviews(), REVIEW_RATE.perAddress.burst);
    assert.deepEqual(new Set(refused), new Set(['rate']));
    await clock.step(1_000);
    const next = await inTurn(5, (i) => auth.check(scrape(`later-${i}`)));
    assert.deepEqual(statuses(next), { 401: REVIEW_RATE.perAddress.perSecond, 429: 5 - REVIEW_RATE.perAddress.perSecond });
    assert.equal((await auth.check(scrape('another', '10.0.0.2'))).status, 401, 'another address has a budget of its own');
  });

  it(`reviews at most ${REVIEW_RATE.overall.burst} new tokens at once from any number of addresses, then ${REVIEW_RATE.overall.perSecond} a second`, async () => {
    const clock = new FakeClock();
    const api = standIn();
    const auth = new MetricsAuth({ api, path: '/metrics', now: () => clock.now() });
    const from = (second: number): Promise<AuthOutcome[]> =>
      inTurn(100, (i) => auth.check(scrape(`random-${second}-${i}`, `10.3.${second}.${i}`)));
    assert.equal(statuses(await from(0))[401], REVIEW_RATE.overall.burst);
    let reviewed = api.tokenReviews();
    for (let second = 1; second <= 30; second++) {
      await clock.step(1_000);
      await from(second);
      assert.equal(api.tokenReviews() - reviewed, REVIEW_RATE.overall.perSecond, `second ${second}`);
      reviewed = api.tokenReviews();
    }
  });

  it('renews an expired approval through a flood that spends the whole review budget', async () => {
    const clock = new FakeClock();
    const api = standIn();
    const auth = new MetricsAuth({ api, path: '/metrics', now: () => clock.now(), allowedTtlMs: 10_000 });
    assert.equal((await auth.check(scrape('good'))).status, 200);
    for (let second = 0; second < 35; second++) {
      await inTurn(50, (i) => auth.check(scrape(`random-${second}-${i}`, `10.4.0.${i}`)));
      assert.equal((await auth.check(scrape('good'))).status, 200, `second ${second}`);
      await clock.step(1_000);
    }
    assert.equal(api.tokenReviews('good'), 4, 'renewed once per TTL');
  });
});
