/**
 * The fault campaign's proxy (scripts/lab/faults/proxy/proxy.ts) against a real API server: RBAC is
 * the impersonated ServiceAccount's and the audit log names the replica; the counted writes and
 * the moment onWrite runs; each watch fault (delay, drop, merge, expire), the storms and the
 * partition, a write held and delivered late, a held answer and a hidden outcome, each seen by a
 * client the way a replica would see it.
 *
 * On a private control plane without a node: nothing here runs a pod, and one test kills a
 * client after its write, which must not disturb other tests.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { once } from 'node:events';
import { request, type ClientRequest, type IncomingHttpHeaders } from 'node:http';
import { connect } from 'node:net';
import { after, before, test, type TestContext } from 'node:test';
import { startFaultProxy, type FaultProxy, type WatchEvent } from '../../scripts/lab/faults/proxy/proxy.js';
import { isNotFound, type RestClient } from '../../src/kube/index.js';
import { auditLogFrom, type AuditEvent } from '../support/audit.js';
import { eventually, within } from '../support/eventually.js';
import { restClient, startPrivateControlPlane, type PrivateControlPlane } from '../support/faults.js';

const NS = 'fault-proxy';
const SA = 'replica';
const SA_USER = `system:serviceaccount:${NS}:${SA}`;
const ECHOS = `/apis/mmontes.io/v1alpha1/namespaces/${NS}/echos`;
const DEADLINE_MS = 30_000;

let cp: PrivateControlPlane | undefined;
const controlPlane = (): PrivateControlPlane => cp ?? assert.fail('the private control plane is not running');

before(async () => {
  cp = await startPrivateControlPlane({ node: false });
  cp.installCrds();
  // The ServiceAccount may read and write Echos but not delete them, and write Leases and Events.
  const role = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: SA, namespace: NS },
    rules: [
      { apiGroups: ['mmontes.io'], resources: ['echos'], verbs: ['get', 'list', 'watch', 'create', 'update', 'patch'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create'] },
      { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create'] },
      { apiGroups: [''], resources: ['configmaps'], verbs: ['get', 'list', 'watch'] },
    ],
  };
  const binding = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: SA, namespace: NS },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: SA },
    subjects: [{ kind: 'ServiceAccount', name: SA, namespace: NS }],
  };
  const objects = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } },
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SA, namespace: NS } },
    role,
    binding,
  ];
  cp.kubectl.ok(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }) });
  // A CRD just established answers 429 until its watch cache is ready; the raw clients below do not retry.
  const admin = await startFaultProxy({
    adminKubeconfig: cp.state.kubeconfig,
    replica: 'admin',
    impersonate: { user: 'kubernetes-admin', groups: ['system:masters'] },
  });
  try {
    await eventually('Echos to be served', async () => (await call(admin, 'GET', ECHOS)).status === 200, DEADLINE_MS);
  } finally {
    await admin.close();
  }
});

after(async () => {
  await cp?.stop();
});

/** A proxy for `replica` as the ServiceAccount, closed when the test ends. */
async function proxyFor(t: TestContext, replica: string): Promise<FaultProxy> {
  const proxy = await startFaultProxy({
    adminKubeconfig: controlPlane().state.kubeconfig,
    replica,
    impersonate: { user: SA_USER, groups: ['system:serviceaccounts', `system:serviceaccounts:${NS}`] },
  });
  t.after(() => proxy.close());
  return proxy;
}

const serverOf = (proxy: FaultProxy): string =>
  (JSON.parse(readFileSync(proxy.kubeconfig, 'utf8')) as { clusters: { cluster: { server: string } }[] }).clusters[0]!.cluster.server;

interface Answer {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
}

/**
 * One request through the proxy: `answer` settles with the whole answer; `sent` resolves with the
 * client's local port once the whole request is in the kernel (written to the connection).
 */
function send(
  proxy: FaultProxy,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): { answer: Promise<Answer>; sent: Promise<number> } {
  let req!: ClientRequest;
  const answer = new Promise<Answer>((resolve, reject) => {
    req = request(new URL(path, serverOf(proxy)), { method, headers: { 'content-type': 'application/json', ...headers } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
  const sent = new Promise<number>((resolve) => req.once('finish', () => resolve(req.socket!.localPort!)));
  return { answer, sent };
}

const portOf = (proxy: FaultProxy): number => Number(new URL(serverOf(proxy)).port);

/**
 * Bytes the kernel holds unread on the end of a loopback TCP connection at `localPort` whose peer
 * is at `remotePort` (Linux /proc/net/tcp: tx_queue:rx_queue); undefined when there is no such
 * connection. The proxy handles what it reads at once, so 0 on its end means it has the request.
 */
function unread(localPort: number, remotePort: number): number | undefined {
  const hex = (port: number): string => port.toString(16).toUpperCase().padStart(4, '0');
  for (const line of readFileSync('/proc/net/tcp', 'utf8').split('\n').slice(1)) {
    const [, local, remote, , queues] = line.trim().split(/\s+/);
    if (local?.endsWith(`:${hex(localPort)}`) && remote?.endsWith(`:${hex(remotePort)}`)) return parseInt(queues!.split(':')[1]!, 16);
  }
  return undefined;
}

const call = (proxy: FaultProxy, method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Answer> =>
  within(`${method} ${path} through the proxy`, send(proxy, method, path, body, headers).answer, DEADLINE_MS);

type Event = WatchEvent & { object: { spec?: { message?: string }; code?: number; reason?: string } };

interface Watching {
  /** The answer's status and headers, once they came. */
  head: Promise<{ status: number; headers: IncomingHttpHeaders }>;
  /** Events so far, each with the Date.now() it reached this client. */
  events: { event: Event; at: number }[];
  /** Settles when the stream ends or breaks. */
  closed: Promise<void>;
  of(name: string): Event[];
}

function watch(t: TestContext, proxy: FaultProxy, path: string, headers: Record<string, string> = {}): Watching {
  const events: Watching['events'] = [];
  let closed!: () => void;
  const closedP = new Promise<void>((r) => (closed = r));
  const head = new Promise<{ status: number; headers: IncomingHttpHeaders }>((resolve, reject) => {
    const req = request(new URL(path, serverOf(proxy)), { headers }, (res) => {
      resolve({ status: res.statusCode ?? 0, headers: res.headers });
      let partial = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => {
        const lines = (partial + chunk).split('\n');
        partial = lines.pop()!;
        for (const l of lines) if (l) events.push({ event: JSON.parse(l) as Event, at: Date.now() });
      });
      res.on('close', closed);
      res.on('error', () => undefined);
    });
    req.on('error', (err) => {
      closed();
      reject(err);
    });
    req.end();
    t.after(() => req.destroy());
  });
  head.catch(() => undefined);
  return { head, events, closed: closedP, of: (name) => events.filter((e) => e.event.object.metadata?.name === name).map((e) => e.event) };
}

const echo = (name: string, message = 'hello'): object => ({
  apiVersion: 'mmontes.io/v1alpha1',
  kind: 'Echo',
  metadata: { name },
  spec: { message },
});

/** The collection's resourceVersion now, so that a watch from it sees only what comes after. */
async function listVersion(admin: RestClient, path: string): Promise<string> {
  return (await admin.request<{ metadata: { resourceVersion: string } }>('GET', path)).metadata.resourceVersion;
}

const setMessage = (admin: RestClient, name: string, message: string): Promise<unknown> =>
  admin.request('PATCH', `${ECHOS}/${name}`, { body: { spec: { message } }, contentType: 'application/merge-patch+json' });

test('RBAC is the impersonated ServiceAccount, whatever identity the client claims, and the audit log names the replica', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  const audit = auditLogFrom(controlPlane().state.kubeconfig);
  assert.equal((await call(proxy, 'GET', ECHOS)).status, 200);
  // Claiming the admin (a token, impersonation headers of its own) must not lift the ServiceAccount's limits.
  const claims = { authorization: 'Bearer not-a-token', 'impersonate-user': 'kubernetes-admin', 'impersonate-group': 'system:masters' };
  const refused = await call(proxy, 'DELETE', `${ECHOS}/nothing`, undefined, claims);
  assert.equal(refused.status, 403, refused.body);
  const status = JSON.parse(refused.body) as { reason: string; message: string };
  assert.equal(status.reason, 'Forbidden');
  assert.ok(status.message.includes(`User "${SA_USER}"`), status.message);
  const created = await call(proxy, 'POST', ECHOS, echo('impersonated'), {
    ...claims,
    'impersonate-extra-claimed': 'by-the-client',
    'user-agent': 'faults-proxy-test/1',
  });
  assert.equal(created.status, 201, created.body);

  type Audited = AuditEvent & { impersonatedUser?: { username?: string; extra?: Record<string, string[]> } };
  const line = await eventually(
    'the audit line of the create',
    () => (audit.writes(NS, 'faults-proxy-test/') as Audited[]).find((e) => e.verb === 'create' && e.objectRef.name === 'impersonated'),
    DEADLINE_MS,
  );
  assert.equal(line.impersonatedUser?.username, SA_USER);
  assert.deepEqual(line.impersonatedUser?.extra, { replica: ['r0'] });
  assert.equal(line.responseStatus?.code, 201);
});

test('writes() counts the answered writes in order, leaving out Leases and Events', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'counted' }, spec: { holderIdentity: 'r0' } };
  const leases = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
  const regarding = { apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', name: 'counted', namespace: NS };
  const microTime = new Date().toISOString().replace(/Z$/, '000Z');

  assert.equal((await call(proxy, 'POST', ECHOS, echo('counted'))).status, 201);
  assert.equal((await call(proxy, 'POST', leases, lease)).status, 201);
  const held = JSON.parse((await call(proxy, 'GET', `${leases}/counted`)).body) as { spec: Record<string, unknown> };
  held.spec.leaseDurationSeconds = 10;
  assert.equal((await call(proxy, 'PUT', `${leases}/counted`, held)).status, 200);
  const coreEvent = { metadata: { name: 'counted.1' }, involvedObject: regarding, reason: 'Test', message: 'm', type: 'Normal' };
  assert.equal((await call(proxy, 'POST', `/api/v1/namespaces/${NS}/events`, coreEvent)).status, 201);
  const newEvent = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: 'counted.2' },
    eventTime: microTime,
    reportingController: 'faults-proxy-test',
    reportingInstance: 'r0',
    action: 'Test',
    reason: 'Test',
    type: 'Normal',
    regarding,
  };
  const newEventAnswer = await call(proxy, 'POST', `/apis/events.k8s.io/v1/namespaces/${NS}/events`, newEvent);
  assert.equal(newEventAnswer.status, 201, newEventAnswer.body);
  const patch = { spec: { message: 'patched' } };
  assert.equal((await call(proxy, 'PATCH', `${ECHOS}/counted`, patch, { 'content-type': 'application/merge-patch+json' })).status, 200);
  assert.equal((await call(proxy, 'DELETE', `${ECHOS}/counted`)).status, 403);
  assert.equal((await call(proxy, 'GET', ECHOS)).status, 200);

  assert.deepEqual(
    proxy.writes().map(({ seq, verb, path, status }) => ({ seq, verb, path, status })),
    [
      { seq: 1, verb: 'POST', path: ECHOS, status: 201 },
      { seq: 2, verb: 'PATCH', path: `${ECHOS}/counted`, status: 200 },
      { seq: 3, verb: 'DELETE', path: `${ECHOS}/counted`, status: 403 },
    ],
  );
});

test('onWrite runs before a byte of the answer reaches the client', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  // A client that reads nothing until told: whatever the proxy sends it waits in the kernel, countable.
  const client = connect(portOf(proxy), '127.0.0.1');
  t.after(() => client.destroy());
  client.pause();
  await within('the connection', once(client, 'connect'), DEADLINE_MS);
  const clientPort = client.localPort!;
  const unreadAtCallback: (number | undefined)[] = [];
  proxy.onWrite(() => unreadAtCallback.push(unread(clientPort, portOf(proxy))));
  const body = JSON.stringify(echo('answered-after-callback'));
  client.write(
    `POST ${ECHOS} HTTP/1.1\r\nHost: proxy\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
  );
  await eventually('the answer to reach the client', () => (unread(clientPort, portOf(proxy)) ?? 0) > 0, DEADLINE_MS);
  assert.deepEqual(unreadAtCallback, [0]);
  client.resume();
  const [head] = (await within('the answer', once(client, 'data'), DEADLINE_MS)) as [Buffer];
  assert.match(head.toString('latin1'), /^HTTP\/1\.1 201 /);
});

test('onWrite runs once the server answered and before the client has the answer: a client killed there never sees it', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  const admin = restClient(t, controlPlane().state.kubeconfig);
  // The client is a process of its own, as a replica is; it prints the answer's status if it gets one.
  const script = `
    const req = require('node:http').request(process.argv[1], { method: 'POST', headers: { 'content-type': 'application/json' } }, (res) => {
      process.stdout.write('ANSWER ' + res.statusCode + '\\n');
    });
    req.end(process.argv[2]);`;
  const child = spawn(process.execPath, ['-e', script, new URL(ECHOS, serverOf(proxy)).href, JSON.stringify(echo('killed-after-write'))], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let output = '';
  child.stdout.on('data', (c: Buffer) => (output += c.toString()));
  const exited = new Promise<string | null>((resolve) => child.once('close', (_code, signal) => resolve(signal)));
  const seen: number[] = [];
  proxy.onWrite((w) => {
    seen.push(w.status);
    child.kill('SIGKILL');
  });

  assert.equal(await within('the client to die', exited, DEADLINE_MS), 'SIGKILL');
  assert.deepEqual(seen, [201]);
  assert.equal(output, '', 'the killed client got the answer');
  // The write happened all the same: the intermediate state the campaign kills into.
  await admin.request('GET', `${ECHOS}/killed-after-write`);
  assert.deepEqual(
    proxy.writes().map((w) => w.status),
    [201],
  );
});

test('delayWatches holds back the events of matching watches, in order; other watches get theirs at once', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  const admin = restClient(t, controlPlane().state.kubeconfig);
  const delayMs = 1500;
  proxy.delayWatches(delayMs, /\/echos$/);
  const w = watch(t, proxy, `${ECHOS}?watch=1&resourceVersion=${await listVersion(admin, ECHOS)}`);
  assert.equal((await within('the watch to start', w.head, DEADLINE_MS)).status, 200);
  const sentAt = Date.now();
  for (const name of ['delayed-1', 'delayed-2', 'delayed-3']) await admin.request('POST', ECHOS, { body: echo(name) });
  await eventually('the three delayed events', () => w.events.length >= 3, DEADLINE_MS);
  assert.deepEqual(
    w.events.map((e) => e.event.object.metadata?.name),
    ['delayed-1', 'delayed-2', 'delayed-3'],
  );
  // The server cannot have sent an event before the request that made it was sent.
  for (const e of w.events) assert.ok(e.at - sentAt >= delayMs, `an event came ${e.at - sentAt} ms after its write`);

  // A delay for other watches (far beyond the deadline below) leaves this one alone.
  proxy.delayWatches(10 * DEADLINE_MS, /\/configmaps$/);
  await admin.request('POST', ECHOS, { body: echo('undelayed') });
  await eventually('the undelayed event', () => w.of('undelayed').length === 1, DEADLINE_MS);
});

test('dropWatchEvents drops the next events it picks, and only as many as asked (also when the client asked for protobuf)', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  const admin = restClient(t, controlPlane().state.kubeconfig);
  proxy.dropWatchEvents(1, (e) => e.object.metadata?.name === 'dropped');
  const w = watch(t, proxy, `${ECHOS}?watch=1&resourceVersion=${await listVersion(admin, ECHOS)}`, {
    accept: 'application/vnd.kubernetes.protobuf;stream=watch, application/json',
  });
  assert.match((await within('the watch to start', w.head, DEADLINE_MS)).headers['content-type'] ?? '', /json/);
  await admin.request('POST', ECHOS, { body: echo('dropped') });
  await admin.request('POST', ECHOS, { body: echo('after') });
  // Events come in the server's order: once the later one is here, the dropped one would be too.
  await eventually('the event after the dropped one', () => w.of('after').length === 1, DEADLINE_MS);
  assert.deepEqual(w.of('dropped'), []);
  await setMessage(admin, 'dropped', 'seen');
  await eventually('the next event of the object', () => w.of('dropped').length === 1, DEADLINE_MS);
  assert.equal(w.of('dropped')[0]!.type, 'MODIFIED');
});

test('mergeWatchEvents passes only the last MODIFIED event of each object in the window', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  const admin = restClient(t, controlPlane().state.kubeconfig);
  const w = watch(t, proxy, `${ECHOS}?watch=1&resourceVersion=${await listVersion(admin, ECHOS)}`);
  await within('the watch to start', w.head, DEADLINE_MS);
  for (const name of ['merged-a', 'merged-b']) await admin.request('POST', ECHOS, { body: echo(name) });
  await eventually('both objects added', () => w.of('merged-b').length === 1, DEADLINE_MS);
  proxy.mergeWatchEvents(3000);
  for (const message of ['m1', 'm2', 'm3']) await setMessage(admin, 'merged-a', message);
  await setMessage(admin, 'merged-b', 'b1');
  await eventually(
    'the last update of each',
    () => w.of('merged-a').at(-1)?.object.spec?.message === 'm3' && w.of('merged-b').length === 2,
    DEADLINE_MS,
  );
  assert.deepEqual(
    w.of('merged-a').map((e) => `${e.type} ${e.object.spec?.message}`),
    ['ADDED hello', 'MODIFIED m3'],
  );
  assert.deepEqual(
    w.of('merged-b').map((e) => `${e.type} ${e.object.spec?.message}`),
    ['ADDED hello', 'MODIFIED b1'],
  );
});

test('expireWatches ends open watches with a 410 ERROR event and answers the next watches so, without asking the server', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  const admin = restClient(t, controlPlane().state.kubeconfig);
  const open = watch(t, proxy, `${ECHOS}?watch=1&resourceVersion=${await listVersion(admin, ECHOS)}`);
  assert.equal((await within('the watch to start', open.head, DEADLINE_MS)).status, 200);
  proxy.expireWatches(1);
  await within('the open watch to end', open.closed, DEADLINE_MS);
  const expired = (w: Watching): void => {
    const last = w.events.at(-1)?.event;
    assert.equal(last?.type, 'ERROR');
    assert.equal(last.object.code, 410);
    assert.equal(last.object.reason, 'Expired');
  };
  expired(open);

  // The ServiceAccount may not watch Secrets: a 200 stream with the 410 comes from the proxy alone.
  const next = watch(t, proxy, `/api/v1/namespaces/${NS}/secrets?watch=true`);
  assert.equal((await within('the next watch to answer', next.head, DEADLINE_MS)).status, 200);
  await within('the next watch to end', next.closed, DEADLINE_MS);
  assert.equal(next.events.length, 1);
  expired(next);

  const later = watch(t, proxy, `${ECHOS}?watch=1&resourceVersion=${await listVersion(admin, ECHOS)}`);
  assert.equal((await within('a later watch to start', later.head, DEADLINE_MS)).status, 200);
  await admin.request('POST', ECHOS, { body: echo('after-expiry') });
  await eventually('a later watch to get events again', () => later.of('after-expiry').length === 1, DEADLINE_MS);
});

test('storm refuses the requests its random draws pick, as the API server would, without forwarding them', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  const admin = restClient(t, controlPlane().state.kubeconfig);
  const draws = [0.1, 0.9, 0.3, 0.7, 0.49, 0.5];
  let drawn = 0;
  proxy.storm({ status: 429, retryAfterS: 7, ms: 10 * DEADLINE_MS, fraction: 0.5, random: () => draws[drawn++]! });
  const answers: Answer[] = [];
  for (let i = 0; i < draws.length; i++) answers.push(await call(proxy, 'GET', ECHOS));
  assert.deepEqual(
    answers.map((a) => a.status),
    [429, 200, 429, 200, 429, 200],
  );
  const refusal = answers[0]!;
  assert.equal(refusal.headers['retry-after'], '7');
  assert.deepEqual(JSON.parse(refusal.body), {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Failure',
    message: 'Too many requests, please try again later.',
    reason: 'TooManyRequests',
    details: { retryAfterSeconds: 7 },
    code: 429,
  });

  for (const [status, reason] of [
    [503, 'ServiceUnavailable'],
    [500, 'InternalError'],
  ] as const) {
    proxy.storm({ status, retryAfterS: 1, ms: 10 * DEADLINE_MS, fraction: 1, random: () => 0.99 });
    const refused = await call(proxy, 'POST', ECHOS, echo(`stormed-${status}`));
    assert.equal(refused.status, status);
    assert.equal(refused.headers['retry-after'], '1');
    assert.equal((JSON.parse(refused.body) as { reason: string }).reason, reason);
    await assert.rejects(admin.request('GET', `${ECHOS}/stormed-${status}`), isNotFound, 'a refused write reached the server');
  }
  assert.deepEqual(proxy.writes(), []);
  proxy.storm({ status: 429, retryAfterS: 1, ms: 0, fraction: 1, random: () => 0 });
  assert.equal((await call(proxy, 'GET', ECHOS)).status, 200);
});

test('silence freezes open requests and holds new ones until restore, which cuts them; then requests pass again', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  const observer = await proxyFor(t, 'r1');
  const admin = restClient(t, controlPlane().state.kubeconfig);
  const rv = await listVersion(admin, ECHOS);
  const silenced = watch(t, proxy, `${ECHOS}?watch=1&resourceVersion=${rv}`);
  const seeing = watch(t, observer, `${ECHOS}?watch=1&resourceVersion=${rv}`);
  await within('the watches to start', Promise.all([silenced.head, seeing.head]), DEADLINE_MS);
  // The partition falls between the server's answer to a write and the client.
  let armed = true;
  proxy.onWrite(() => {
    if (armed) proxy.silence();
    armed = false;
  });
  const write = send(proxy, 'POST', ECHOS, echo('written-before-silence')).answer;
  write.catch(() => undefined);
  await eventually('the server to answer the write', () => proxy.writes().length === 1, DEADLINE_MS);
  // What the server sends an open watch now stays with the proxy.
  await admin.request('POST', ECHOS, { body: echo('created-in-silence') });
  await eventually('the other replica to see the create', () => seeing.of('created-in-silence').length === 1, DEADLINE_MS);
  // A new request is read by the proxy, and held.
  const held = send(proxy, 'GET', ECHOS);
  held.answer.catch(() => undefined);
  const clientPort = await within('the new request to be sent', held.sent, DEADLINE_MS);
  await eventually('the proxy to read the new request', () => unread(portOf(proxy), clientPort) === 0, DEADLINE_MS);

  proxy.restore();
  await assert.rejects(within('the frozen write', write, DEADLINE_MS), /socket hang up|ECONNRESET/);
  await assert.rejects(within('the held request', held.answer, DEADLINE_MS), /socket hang up|ECONNRESET/);
  await within('the silenced watch to be cut', silenced.closed, DEADLINE_MS);
  assert.deepEqual(silenced.of('created-in-silence'), []);
  // The write happened; the client never heard. New requests pass again.
  assert.equal((await call(proxy, 'GET', `${ECHOS}/written-before-silence`)).status, 200);
});

test('records a Lease write as a renewal only when the server took it and its answer reached the replica', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  const leases = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
  const lease = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'renewals' }, spec: { holderIdentity: 'r0' } };
  const before = Date.now();
  assert.equal((await call(proxy, 'POST', leases, lease)).status, 201);
  const [created] = proxy.leaseRenewals();
  assert.ok(created && created.receivedAt >= before && created.answeredAt >= created.receivedAt, JSON.stringify(created));
  assert.equal((await call(proxy, 'POST', leases, lease)).status, 409);
  assert.equal(proxy.leaseRenewals().length, 1, 'a refused write renews nothing');
  assert.deepEqual(proxy.writes(), [], 'Lease writes are not counted writes');
  proxy.silence();
  const held = send(proxy, 'PUT', `${leases}/renewals`, lease);
  held.answer.catch(() => undefined);
  const clientPort = await within('the write to be sent', held.sent, DEADLINE_MS);
  await eventually('the proxy to read the write', () => unread(portOf(proxy), clientPort) === 0, DEADLINE_MS);
  proxy.restore();
  await assert.rejects(within('the held write', held.answer, DEADLINE_MS), /socket hang up|ECONNRESET/);
  assert.equal(proxy.leaseRenewals().length, 1, 'a write whose answer never came renews nothing');
});

test('close() cuts open watches and leaves no listener or kubeconfig behind', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  const admin = restClient(t, controlPlane().state.kubeconfig);
  proxy.delayWatches(10 * DEADLINE_MS);
  const w = watch(t, proxy, `${ECHOS}?watch=1&resourceVersion=${await listVersion(admin, ECHOS)}`);
  await within('the watch to start', w.head, DEADLINE_MS);
  await admin.request('POST', ECHOS, { body: echo('held-at-close') });
  const server = serverOf(proxy);
  await within('close()', proxy.close(), DEADLINE_MS);
  await within('the watch to be cut', w.closed, DEADLINE_MS);
  assert.equal(existsSync(proxy.kubeconfig), false);
  await assert.rejects(fetch(server), /fetch failed/);
});

test('late: holdNext keeps a write from the server until deliver(), which sends it with an Audit-ID the audit log records', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  const admin = restClient(t, controlPlane().state.kubeconfig);
  const audit = auditLogFrom(controlPlane().state.kubeconfig);
  const holding = proxy.late.holdNext((method, path) => method === 'POST' && path === ECHOS, 1);
  assert.equal((await call(proxy, 'POST', ECHOS, echo('late-skipped'))).status, 201, 'the first is passed on (skip 1)');
  const { answer } = send(proxy, 'POST', ECHOS, echo('late-held'), { 'user-agent': 'faults-proxy-test/late' });
  const outcome = answer.then(
    (a) => `answered ${a.status}`,
    () => 'cut',
  );
  const held = await within('the write to be held', holding, DEADLINE_MS);
  assert.equal(held.verb, 'POST');
  assert.equal((await call(proxy, 'POST', ECHOS, echo('late-after'))).status, 201, 'one write is held, the next passes');
  await assert.rejects(admin.request('GET', `${ECHOS}/late-held`), (err) => isNotFound(err), 'the server has not seen it');
  const { status, auditID } = await within('the delivery', held.deliver(), DEADLINE_MS);
  assert.equal(status, 201);
  assert.equal(await within('the client', outcome, DEADLINE_MS), 'cut', 'its answer never reaches the client');
  await admin.request('GET', `${ECHOS}/late-held`);
  type Audited = AuditEvent & { auditID?: string };
  const line = await eventually(
    'the audit line of the delivered create',
    () => (audit.writes(NS, 'faults-proxy-test/') as Audited[]).find((e) => e.verb === 'create' && e.objectRef.name === 'late-held'),
    DEADLINE_MS,
  );
  assert.equal(line.auditID, auditID);
  assert.equal(line.responseStatus?.code, 201);
});

test('late: slowDown holds the answers it picks, the server having applied the write', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  const admin = restClient(t, controlPlane().state.kubeconfig);
  proxy.late.slowDown((method) => method === 'POST', 5000, DEADLINE_MS);
  let answered = false;
  const { answer } = send(proxy, 'POST', ECHOS, echo('slow-answer'));
  void answer.then(() => (answered = true));
  await eventually('the server to have the Echo', () => admin.request('GET', `${ECHOS}/slow-answer`).then(() => true), DEADLINE_MS, 50);
  assert.equal(answered, false, 'the server applied it; its answer is held');
  assert.equal((await call(proxy, 'GET', `${ECHOS}/slow-answer`)).status, 200, 'a request it does not pick is answered at once');
  assert.equal((await within('the held answer', answer, DEADLINE_MS)).status, 201);
  assert.deepEqual(
    proxy.late.slowAnswers.map((a) => [a.verb, a.status, a.heldMs]),
    [['POST', 201, 5000]],
  );
});

test('ambiguous: hideNext replaces the answers to committed writes it picks (503, or a reset), never a refusal', async (t) => {
  const proxy = await proxyFor(t, 'r0');
  const admin = restClient(t, controlPlane().state.kubeconfig);
  assert.equal((await call(proxy, 'POST', ECHOS, echo('ambiguous-1'))).status, 201);
  const creates = (method: string, path: string): boolean => method === 'POST' && path === ECHOS;
  proxy.ambiguous.hideNext(creates, { skip: 0, count: 1, as: 503 });
  assert.equal((await call(proxy, 'POST', ECHOS, echo('ambiguous-1'))).status, 409, 'a refused write committed nothing: passed on');
  const hidden = await call(proxy, 'POST', ECHOS, echo('ambiguous-2'));
  assert.equal(hidden.status, 503);
  assert.equal(hidden.headers['retry-after'], '1');
  await admin.request('GET', `${ECHOS}/ambiguous-2`);
  proxy.ambiguous.hideNext(creates, { skip: 0, count: 1, as: 'reset' });
  await assert.rejects(
    within('the reset', send(proxy, 'POST', ECHOS, echo('ambiguous-3')).answer, DEADLINE_MS),
    /socket hang up|ECONNRESET/,
  );
  await admin.request('GET', `${ECHOS}/ambiguous-3`);
  assert.deepEqual(
    proxy.ambiguous.hidden.map((h) => [h.verb, h.status, h.as]),
    [
      ['POST', 201, 503],
      ['POST', 201, 'reset'],
    ],
  );
});
