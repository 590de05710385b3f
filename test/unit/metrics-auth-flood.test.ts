/**
 * Scrapes cannot starve the work (issue 32, item 4): a flood of scrapes with new bearer tokens
 * gets at most MAX_REVIEWS_IN_FLIGHT tokens under review; the rest are answered 503 with
 * Retry-After at once, not queued; the reviews run on connections of their own, so one that
 * hangs never delays the operator's other requests; a review that hangs frees its slot at its
 * deadline; the endpoint counts the refusals. A local HTTPS server stands in for the API server: it answers every request at once,
 * except TokenReviews, which it holds without a word.
 */
import assert from 'node:assert/strict';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer } from 'node:https';
import type { Socket } from 'node:net';
import { describe, it, type TestContext } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { RestClient } from '../../src/kube/rest.js';
import { MAX_REVIEWS_IN_FLIGHT, MetricsAuth, type ReviewApi } from '../../src/observability/metricsauth.js';
import { createMetrics } from '../../src/observability/metrics.js';
import { MetricsEndpoint } from '../../src/observability/metricsendpoint.js';
import { selfSignedCertificate } from '../../src/observability/selfsigned.js';
import { eventually, within } from '../support/eventually.js';
import { get, metricSample } from '../support/http.js';
import type { RequestOpts } from '../../src/kube/rest.js';

const req = (token: string): IncomingMessage => ({ headers: { authorization: `Bearer ${token}` } }) as IncomingMessage;

/** Reviews that never answer until released; every call is recorded. */
function gatedApi(): ReviewApi & { calls: string[]; release(): void } {
  let open!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const api = {
    calls: [] as string[],
    release: () => open(),
    async request<T>(_method: string, path: string, opts: RequestOpts = {}): Promise<T> {
      api.calls.push(path);
      await gate;
      const spec = (opts.body as { spec: { token?: string } }).spec;
      return (
        path.endsWith('/tokenreviews')
          ? { status: { authenticated: spec.token === 'good', user: { username: 'prometheus' } } }
          : { status: { allowed: true } }
      ) as T;
    },
  };
  return api;
}

describe('metrics access under a flood of new tokens', () => {
  it(`reviews at most ${MAX_REVIEWS_IN_FLIGHT} tokens at once; the next scrape is 503 with Retry-After at once, and counted`, async () => {
    const api = gatedApi();
    let refused = 0;
    const auth = new MetricsAuth({ api, path: '/metrics', onRefused: () => refused++ });
    const reviewing = Array.from({ length: MAX_REVIEWS_IN_FLIGHT }, (_, i) => auth.check(req(i === 0 ? 'good' : `flood-${i}`)));
    assert.equal(auth.reviewsInFlight, MAX_REVIEWS_IN_FLIGHT);
    // Answered while every review still hangs: nothing queued behind them.
    const busy = await within('a scrape beyond the cap', auth.check(req('one-too-many')), 1_000);
    assert.equal(busy.status, 503);
    assert.equal(busy.retryAfterSeconds, 1);
    assert.match(busy.message, /try again/);
    assert.equal(refused, 1);
    // The same token as a review in flight shares it: no slot, no refusal.
    const joined = auth.check(req('good'));
    assert.equal(api.calls.length, MAX_REVIEWS_IN_FLIGHT, 'the refused scrape sent no review');
    api.release();
    assert.equal((await joined).status, 200);
    await Promise.all(reviewing);
    assert.equal(auth.reviewsInFlight, 0);
    assert.equal((await auth.check(req('one-too-many'))).status, 401, 'reviewed once slots are free (not a cached refusal)');
    assert.equal(refused, 1);
  });

  it('serves a cached decision through the flood', async () => {
    const api = gatedApi();
    api.release();
    const auth = new MetricsAuth({ api, path: '/metrics' });
    assert.equal((await auth.check(req('good'))).status, 200);
    const hanging = gatedApi();
    api.request = hanging.request.bind(hanging);
    const flood = Array.from({ length: 50 }, (_, i) => auth.check(req(`flood-${i}`)));
    assert.equal((await auth.check(req('good'))).status, 200);
    hanging.release();
    const statuses = (await Promise.all(flood)).map((o) => o.status);
    assert.equal(statuses.filter((s) => s === 503).length, 50 - MAX_REVIEWS_IN_FLIGHT);
  });
});

/** An HTTPS stand-in for the API server: TokenReviews are held unanswered, the rest answered at once. */
interface StandIn {
  url: string;
  /** TokenReviews held now (their connections still open). */
  heldReviews(): number;
  /** The Authorization header of every request, by path. */
  authorization: Map<string, string | undefined>;
}

async function apiServer(t: TestContext): Promise<StandIn> {
  const { cert, key } = selfSignedCertificate();
  const held = new Set<ServerResponse>();
  const sockets = new Set<Socket>();
  const authorization = new Map<string, string | undefined>();
  const server = createServer({ cert, key }, (r: IncomingMessage, res: ServerResponse) => {
    r.resume();
    authorization.set(r.url ?? '', r.headers.authorization);
    if (r.url?.endsWith('/tokenreviews')) {
      held.add(res);
      res.on('close', () => held.delete(res));
      return;
    }
    res.writeHead(200, { 'Content-Type': 'application/json' });
    res.end('{"kind":"Lease"}');
  });
  server.on('connection', (s: Socket) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of sockets) s.destroy();
    server.close();
  });
  return {
    url: `https://127.0.0.1:${(server.address() as { port: number }).port}`,
    heldReviews: () => held.size,
    authorization,
  };
}

/**
 * The stand-in API server; the operator's client to it, with as few sockets as there are review
 * slots (so hanging reviews could fill it); the filter, reviewing through a client derived from it.
 */
async function wired(t: TestContext, reviewTimeoutMs: number): Promise<{ api: StandIn; rest: RestClient; auth: MetricsAuth }> {
  const api = await apiServer(t);
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: api.url, skipTLSVerify: true }],
    users: [{ name: 'u', token: 'operator-token' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const rest = new RestClient(kc, { env: {}, maxSockets: MAX_REVIEWS_IN_FLIGHT });
  const reviews = rest.withOwnConnections({ maxSockets: MAX_REVIEWS_IN_FLIGHT });
  t.after(() => {
    reviews.close();
    rest.close();
  });
  return { api, rest, auth: new MetricsAuth({ api: reviews, path: '/metrics', reviewTimeoutMs }) };
}

describe('access reviews on connections of their own', () => {
  it("hanging reviews do not delay the operator's requests (a reconcile's GET, a Lease's PUT)", async (t) => {
    const { api, rest, auth } = await wired(t, 60_000);
    const flood = Array.from({ length: 20 }, (_, i) => auth.check(req(`flood-${i}`)));
    await eventually('every review slot holds a hanging TokenReview', () => api.heldReviews() === MAX_REVIEWS_IN_FLIGHT, 5_000, 20);
    await within('a GET on the main client', rest.request('GET', '/apis/batch/v1/namespaces/a/jobs/j', { timeoutMs: 30_000 }), 2_000);
    await within(
      'a PUT on the main client',
      rest.request('PUT', '/apis/coordination.k8s.io/v1/namespaces/a/leases/l', { body: {}, timeoutMs: 30_000 }),
      2_000,
    );
    const statuses = (await within('the refused scrapes', Promise.all(flood.slice(MAX_REVIEWS_IN_FLIGHT)), 2_000)).map((o) => o.status);
    assert.deepEqual(new Set(statuses), new Set([503]));
    // The same credentials on both pools: the reviews' client authenticates through the operator's.
    assert.deepEqual(new Set(api.authorization.values()), new Set(['Bearer operator-token']));
    assert.equal(api.authorization.size, 3);
    rest.close(); // not the reviews' client: they hang on
    assert.equal(api.heldReviews(), MAX_REVIEWS_IN_FLIGHT);
  });

  it("a review that never answers frees its slot and its socket at the review's deadline", async (t) => {
    const { api, auth } = await wired(t, 300);
    const first = Array.from({ length: MAX_REVIEWS_IN_FLIGHT }, (_, i) => auth.check(req(`first-${i}`)));
    assert.equal((await auth.check(req('refused'))).status, 503);
    const outcomes = await within('reviews past their deadline', Promise.all(first), 5_000);
    for (const o of outcomes) assert.equal(o.status, 503, 'a review that timed out is a transient failure');
    assert.equal(auth.reviewsInFlight, 0);
    await eventually('the server saw the hanging reviews closed', () => api.heldReviews() === 0, 5_000, 20);
    // The slots are free again: the next new token is reviewed (and held) instead of refused at once.
    const next = auth.check(req('next'));
    await eventually('the next token reaches the API server', () => api.heldReviews() === 1, 5_000, 20);
    assert.equal((await next).status, 503);
  });
});

describe('the metrics endpoint under a flood', () => {
  it('counts refused scrapes in metrics_auth_refused_total and shows the slots in use in metrics_auth_reviews_in_flight', async (t) => {
    const metrics = createMetrics({ defaultMetrics: false });
    const api = gatedApi();
    const endpoint = new MetricsEndpoint({
      registry: metrics.registry,
      port: 0,
      path: '/metrics',
      certDir: '',
      insecurePlainHttp: false,
      api,
    });
    await endpoint.start();
    t.after(async () => {
      api.release();
      await endpoint.close();
    });
    const reply = (token: string) =>
      get(endpoint.port, '/metrics', { tls: true, fresh: true, headers: { Authorization: `Bearer ${token}` } });
    const scrape = (token: string): Promise<number> => reply(token).then((r) => r.status);
    const hanging = Array.from({ length: MAX_REVIEWS_IN_FLIGHT }, (_, i) => scrape(i === 0 ? 'good' : `flood-${i}`));
    await eventually('every review slot taken', () => api.calls.length === MAX_REVIEWS_IN_FLIGHT, 5_000, 20);
    const refused = await Promise.all([reply('x'), reply('y'), reply('z')]);
    assert.deepEqual(
      refused.map((r) => [r.status, r.headers['retry-after']]),
      [
        [503, '1'],
        [503, '1'],
        [503, '1'],
      ],
    );
    assert.equal(metricSample(await metrics.registry.metrics(), 'metrics_auth_refused_total'), 3);
    assert.equal(metricSample(await metrics.registry.metrics(), 'metrics_auth_reviews_in_flight'), MAX_REVIEWS_IN_FLIGHT);
    api.release();
    assert.equal(await hanging[0], 200);
    assert.equal(metricSample(await metrics.registry.metrics(), 'metrics_auth_reviews_in_flight'), 0);
  });
});
