/**
 * Leader election against an in-memory Lease with real optimistic concurrency, shared by several
 * electors on one FakeClock; plus KubeLeaseLock against a local HTTP server for the wire format.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { describe, test } from 'node:test';
import type { V1Lease } from '@kubernetes/client-node';
import { restLeaseApi, type LeaseCall } from '../../src/kube/coordination.js';
import { FakeClock, flushMicrotasks } from '../../src/runtime/testing/clock.js';
import {
  KubeLeaseLock,
  LeaderElector,
  LeadershipLostError,
  LeaseConflictError,
  validateLeaderElectionConfig,
  type LeaderElectionConfigInput,
  type LeaderRecord,
  type LeaseLock,
  type LeaseState,
} from '../../src/runtime/leaderelection/index.js';
import { restClientOn } from '../support/localapi.js';

const EPOCH = Date.parse('2030-01-01T00:00:00Z');
const TEN_YEARS_MS = 10 * 365 * 24 * 3600 * 1000;

/** The API server's side of one Lease: versioned, and every write recorded. */
class LeaseStore {
  private current: { record: LeaderRecord; version: number } | undefined;
  readonly writes: LeaderRecord[] = [];
  onWrite: ((record: LeaderRecord) => void) | undefined;

  read(): LeaseState | undefined {
    return this.current && { record: { ...this.current.record }, resourceVersion: String(this.current.version) };
  }

  write(record: LeaderRecord, expectedVersion?: string): LeaseState {
    if (expectedVersion === undefined ? this.current : String(this.current?.version) !== expectedVersion) {
      throw new LeaseConflictError(`stale write (have ${this.current?.version}, got ${expectedVersion})`);
    }
    this.current = { record: { ...record }, version: (this.current?.version ?? 0) + 1 };
    this.writes.push({ ...record });
    this.onWrite?.(record);
    return this.read()!;
  }

  get record(): LeaderRecord | undefined {
    return this.read()?.record;
  }
}

/** One candidate's connection to the store, with fault injection. */
class FakeLock implements LeaseLock {
  readonly calls = { get: 0, create: 0, update: 0 };
  /** Every call rejects, as if partitioned from the API server. */
  failing = false;
  /** Every call settles only when its signal aborts (never without one), as if the connection hung. */
  hanging = false;
  /** Calls not settled yet. */
  pending = 0;
  /** The signal of every call, in order (undefined when the elector gave none). */
  readonly signals: (AbortSignal | undefined)[] = [];
  /** While set, calls wait for it before touching the store. */
  gate: Promise<void> | undefined;
  /** While set, reads (not writes) wait for it: an API server slow to answer a GET. */
  readGate: Promise<void> | undefined;
  /**
   * When set, the next write is first refused with a Retry-After of this many ms (fake time) and
   * then sent again, as RestClient does: onSend runs before each of the two attempts.
   */
  refuseNextWriteForMs: number | undefined;

  constructor(
    private readonly store: LeaseStore,
    private readonly clock: FakeClock,
  ) {}

  async get(call: LeaseCall = {}): Promise<LeaseState | undefined> {
    await this.enter('get', call);
    return this.store.read();
  }

  async create(record: LeaderRecord, call: LeaseCall = {}): Promise<LeaseState> {
    await this.enter('create', call);
    return this.store.write(record);
  }

  async update(record: LeaderRecord, resourceVersion: string, call: LeaseCall = {}): Promise<LeaseState> {
    await this.enter('update', call);
    return this.store.write(record, resourceVersion);
  }

  private async enter(op: keyof FakeLock['calls'], { signal, onSend }: LeaseCall): Promise<void> {
    this.calls[op]++;
    this.signals.push(signal);
    this.pending++;
    onSend?.();
    try {
      const refusedForMs = op === 'get' ? undefined : this.refuseNextWriteForMs;
      if (refusedForMs !== undefined) {
        this.refuseNextWriteForMs = undefined;
        await this.clock.sleep(refusedForMs, signal);
        onSend?.();
      }
      if (this.gate) await this.gate;
      if (op === 'get' && this.readGate) await this.readGate;
      if (this.hanging) {
        await new Promise<never>((_, reject) => signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true }));
      }
      if (this.failing) throw new Error('connect ECONNREFUSED');
    } finally {
      this.pending--;
    }
  }
}

/** A running elector and everything observed about it, timed by the fake clock. */
class Candidate {
  readonly lock: FakeLock;
  readonly elector: LeaderElector;
  readonly cancel = new AbortController();
  /** How run() ended: 'resolved' or the rejection. */
  readonly outcome: Promise<unknown>;
  leadingSignal: AbortSignal | undefined;
  startedAt: number | undefined;
  leadingAbortedAt: number | undefined;
  stoppedAt: number | undefined;
  readonly newLeaders: string[] = [];
  /** Every value reported to LeaderElectionMetrics.setLeader. */
  readonly leaderGauge: boolean[] = [];
  readonly events: string[];

  constructor(
    readonly identity: string,
    store: LeaseStore,
    clock: FakeClock,
    opts: {
      skewMs?: number;
      config?: Partial<LeaderElectionConfigInput>;
      events?: string[];
      stubbornWork?: boolean;
      readGate?: Promise<void>;
    } = {},
  ) {
    this.events = opts.events ?? [];
    this.lock = new FakeLock(store, clock);
    this.lock.readGate = opts.readGate;
    const config = { leaseName: 'echoperator', namespace: 'ns', identity, ...opts.config };
    this.elector = new LeaderElector(config, this.lock, {
      clock,
      metrics: { setLeader: (v) => this.leaderGauge.push(v) },
      wallClock: () => new Date(EPOCH + (opts.skewMs ?? 0) + clock.now()),
      random: () => 0,
    });
    this.outcome = this.elector
      .run(
        {
          onStartedLeading: (signal) => {
            this.leadingSignal = signal;
            this.startedAt = clock.now();
            this.events.push(`${identity} started`);
            signal.addEventListener('abort', () => {
              this.leadingAbortedAt = clock.now();
              this.events.push(`${identity} aborted`);
            });
            // Work that winds down asynchronously once told to stop, or (stubborn) never does.
            return new Promise<void>((resolve) => {
              if (opts.stubbornWork) return;
              signal.addEventListener('abort', () =>
                setImmediate(() => {
                  this.events.push(`${identity} work done`);
                  resolve();
                }),
              );
            });
          },
          onStoppedLeading: () => {
            this.stoppedAt = clock.now();
            this.events.push(`${identity} stopped`);
          },
          onNewLeader: (id) => this.newLeaders.push(id),
        },
        this.cancel.signal,
      )
      .then(
        () => 'resolved',
        (err: unknown) => err,
      );
  }
}

/** Lets promise chains (including setImmediate hops) finish without moving fake time. */
async function settle(): Promise<void> {
  for (let i = 0; i < 5; i++) {
    await flushMicrotasks(100);
    await new Promise((r) => setImmediate(r));
  }
  await flushMicrotasks(100);
}

/**
 * Moves fake time to `until` from timer to timer, with chains settled after each, so every timer
 * an attempt sets starts from the instant the attempt really ended. `check` runs after every timer
 * (the only moments the electors' state can change).
 */
async function advanceTo(clock: FakeClock, until: number, check?: () => void): Promise<void> {
  await clock.runUntil(until, async () => {
    await settle();
    check?.();
  });
}

function setup() {
  const clock = new FakeClock();
  const store = new LeaseStore();
  const events: string[] = [];
  const candidate = (identity: string, opts: ConstructorParameters<typeof Candidate>[3] = {}) =>
    new Candidate(identity, store, clock, { events, ...opts });
  return { clock, store, events, candidate };
}

describe('validateLeaderElectionConfig', () => {
  const base = { leaseName: 'echoperator', namespace: 'ns', identity: 'pod-a' };

  test('fills in client-go defaults', () => {
    assert.deepEqual(validateLeaderElectionConfig(base), {
      ...base,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      releaseOnCancel: true,
    });
  });

  test('names the offending setting', () => {
    const cases: Array<[Partial<LeaderElectionConfigInput>, RegExp]> = [
      [{ identity: '' }, /identity must be a non-empty string/],
      [{ leaseName: ' ' }, /leaseName must be a non-empty string/],
      [{ namespace: '' }, /namespace must be a non-empty string/],
      [{ retryPeriodMs: 0 }, /retryPeriodMs must be a positive number/],
      [{ leaseDurationMs: Number.NaN }, /leaseDurationMs must be a positive number/],
      [{ renewDeadlineMs: -1 }, /renewDeadlineMs must be a positive number/],
      [{ leaseDurationMs: 10_000, renewDeadlineMs: 10_000 }, /leaseDurationMs \(10000\) must be greater than renewDeadlineMs \(10000\)/],
      [{ renewDeadlineMs: 2_400, retryPeriodMs: 2_000 }, /renewDeadlineMs \(2400\) must be greater than 1.2 x retryPeriodMs \(2400\)/],
    ];
    for (const [override, message] of cases) {
      assert.throws(() => validateLeaderElectionConfig({ ...base, ...override }), message, JSON.stringify(override));
    }
  });

  test('accepts the tightest valid ordering', () => {
    const config = validateLeaderElectionConfig({ ...base, leaseDurationMs: 2_402, renewDeadlineMs: 2_401, retryPeriodMs: 2_000 });
    assert.equal(config.renewDeadlineMs, 2_401);
  });
});

describe('LeaderElector', () => {
  test('exactly one of three candidates leads, and all agree who', async () => {
    const { clock, store, candidate } = setup();
    const all = ['a', 'b', 'c'].map((id) => candidate(id));

    await advanceTo(clock, 30_000, () => {
      assert.ok(all.filter((c) => c.elector.isLeader()).length <= 1, `two leaders at ${clock.now()}`);
    });

    const leaders = all.filter((c) => c.elector.isLeader());
    assert.equal(leaders.length, 1);
    const leader = leaders[0]!;
    assert.equal(all.filter((c) => c.startedAt !== undefined).length, 1, 'onStartedLeading called once overall');
    assert.equal(store.record?.holderIdentity, leader.identity);
    assert.equal(store.record?.leaderTransitions, 0, 'renewals by the same holder are not transitions');
    for (const c of all) {
      assert.equal(c.elector.getLeader(), leader.identity);
      assert.deepEqual(c.newLeaders, [leader.identity]);
    }

    for (const c of all) c.cancel.abort();
    await settle();
    for (const c of all) assert.equal(await c.outcome, 'resolved');
  });

  for (const fault of ['failing', 'hanging'] as const) {
    test(`a leader whose calls are ${fault} stops leading at renewDeadline after its last renewal`, async () => {
      const { clock, candidate } = setup();
      const a = candidate('a');
      await advanceTo(clock, 4_500); // acquired at 0, renewed at 2000 and 4000
      assert.ok(a.elector.isLeader());
      a.lock[fault] = true;

      const deadline = 4_000 + 10_000;
      await advanceTo(clock, deadline - 10);
      assert.equal(a.leadingSignal?.aborted, false, 'still leading just before the deadline');
      assert.equal(a.stoppedAt, undefined);

      await advanceTo(clock, deadline);
      assert.equal(a.leadingAbortedAt, deadline, 'leading signal aborted exactly at the deadline');
      assert.equal(a.elector.isLeader(), false);
      assert.deepEqual(a.leaderGauge, [false, true, false]);
      await settle();
      assert.equal(a.stoppedAt, deadline);
      const outcome = await a.outcome;
      assert.ok(outcome instanceof LeadershipLostError, `run rejected with ${String(outcome)}`);
    });
  }

  test("a hung renewal is cut at the renew deadline (client-go's per-try context), leaving no call behind", async () => {
    const { clock, candidate } = setup();
    const a = candidate('a');
    await advanceTo(clock, 4_500); // acquired at 0, renewed at 2000 and 4000
    assert.ok(a.elector.isLeader());
    a.lock.hanging = true;
    const before = a.lock.signals.length;

    const deadline = 4_000 + 10_000;
    await advanceTo(clock, deadline - 10);
    assert.equal(a.lock.pending, 1, 'the renewal at 6000 hangs');
    const renewal = a.lock.signals[before];
    assert.ok(renewal, 'the renewal was given a signal');
    assert.equal(renewal.aborted, false, 'not cut before the deadline');

    await advanceTo(clock, deadline);
    assert.equal(renewal.aborted, true, 'cut exactly at the deadline');
    await settle();
    assert.equal(a.lock.pending, 0, 'no renewal outlives the term');
    assert.ok((await a.outcome) instanceof LeadershipLostError);
  });

  for (const [name, skewMs] of [
    ['far in the past', -TEN_YEARS_MS],
    ['far in the future', TEN_YEARS_MS],
  ] as const) {
    test(`a standby takes over only after the lease stood unchanged for leaseDuration by its clock (renewTime ${name})`, async () => {
      const { clock, store, candidate } = setup();
      const a = candidate('a', { skewMs });
      await advanceTo(clock, 1_000);
      const b = candidate('b'); // tries at 1000, 3000, 5000, ...
      await advanceTo(clock, 4_500);
      assert.ok(a.elector.isLeader());
      assert.equal(b.elector.isLeader(), false, 'a renewing leader is never displaced, whatever its renewTime says');
      a.lock.hanging = true; // a dies after its renewal at 4000

      // b first sees a's last record at 5000; it has stood for 15 s at 20000; b's next try is 21000.
      await advanceTo(clock, 20_990);
      assert.equal(b.elector.isLeader(), false, 'took over before leaseDuration had passed on its own clock');
      await advanceTo(clock, 21_000);
      assert.equal(b.elector.isLeader(), true, 'did not take over once leaseDuration had passed');
      assert.equal(store.record?.holderIdentity, 'b');
      assert.equal(store.record?.leaderTransitions, 1);
      assert.ok(a.leadingAbortedAt! < b.startedAt!, 'the old leader stopped before the new one started');

      b.cancel.abort();
      await settle();
      assert.equal(await b.outcome, 'resolved');
      assert.ok((await a.outcome) instanceof LeadershipLostError);
    });
  }

  test('graceful cancel releases the lease after the work stops, and a woken standby takes over at once', async () => {
    const { clock, store, events, candidate } = setup();
    const a = candidate('a');
    await advanceTo(clock, 500);
    const b = candidate('b');
    await advanceTo(clock, 3_000);
    assert.ok(a.elector.isLeader());
    assert.equal(b.elector.isLeader(), false);
    const writesBefore = store.writes.length;
    store.onWrite = (record) => events.push(record.holderIdentity === '' ? 'released' : `${record.holderIdentity} wrote`);

    a.cancel.abort();
    assert.equal(a.leadingSignal?.aborted, true, 'leading signal aborts synchronously on cancel');
    await settle();
    assert.equal(await a.outcome, 'resolved');
    assert.deepEqual(events, ['a started', 'a aborted', 'a work done', 'released', 'a stopped'], 'released only after the work stopped');
    assert.equal(store.writes.length, writesBefore + 1, 'exactly one write: the release');
    assert.deepEqual({ holder: store.record?.holderIdentity, duration: store.record?.leaseDurationSeconds }, { holder: '', duration: 1 });
    assert.equal(b.elector.isLeader(), false, 'b has not looked yet: its next retry is at 4500');

    b.elector.wake();
    await settle();
    assert.equal(clock.now(), 3_000, 'no fake time passed');
    assert.equal(b.elector.isLeader(), true);
    assert.equal(store.record?.holderIdentity, 'b');
    assert.equal(store.record?.leaderTransitions, 1);

    b.cancel.abort();
    await settle();
    assert.equal(await b.outcome, 'resolved');
  });

  test('release is skipped when the leading work outlives the renew deadline', async () => {
    const { clock, store, candidate } = setup();
    const a = candidate('a', { stubbornWork: true });
    await advanceTo(clock, 3_000); // renewed at 2000: leadership is good until 12000
    a.cancel.abort();
    await settle();
    assert.equal(a.leadingSignal?.aborted, true);
    assert.equal(store.record?.holderIdentity, 'a', 'not released while the work may still run');

    await advanceTo(clock, 12_000 - 10);
    assert.equal(a.stoppedAt, undefined, 'waits for the work until the renew deadline');
    assert.equal(store.record?.renewTime, new Date(EPOCH + 2_000).toISOString().replace('Z', '000Z'), 'no renewals after cancel');
    await advanceTo(clock, 12_000);
    await settle();
    assert.equal(a.stoppedAt, 12_000);
    assert.equal(await a.outcome, 'resolved');
    assert.equal(store.record?.holderIdentity, 'a', 'left to expire rather than released under running work');
  });

  test('wake() makes a standby try at once and coalesces', async () => {
    const { clock, candidate } = setup();
    const a = candidate('a');
    await advanceTo(clock, 500);
    const b = candidate('b');
    await advanceTo(clock, 1_000);
    assert.equal(b.lock.calls.get, 1, 'b tried once, at 500');

    for (let i = 0; i < 5; i++) b.elector.wake();
    await settle();
    assert.equal(b.lock.calls.get, 2, 'five wakes before the attempt started make one attempt');
    assert.equal(b.elector.isLeader(), false);

    // Wakes during an attempt in flight queue exactly one more.
    let open!: () => void;
    b.lock.gate = new Promise<void>((r) => (open = r));
    b.elector.wake();
    await settle();
    assert.equal(b.lock.calls.get, 3);
    b.elector.wake();
    b.elector.wake();
    b.lock.gate = undefined;
    open();
    await settle();
    assert.equal(b.lock.calls.get, 4, 'one follow-up attempt for the wakes during the read');
    await advanceTo(clock, 1_000 + 1_990);
    assert.equal(b.lock.calls.get, 4, 'then back to the retry period, counted from the last attempt');
    await advanceTo(clock, 3_000);
    assert.equal(b.lock.calls.get, 5);

    const leaderCalls = { ...a.lock.calls };
    a.elector.wake();
    await settle();
    assert.deepEqual(a.lock.calls, leaderCalls, 'a leader ignores wake()');

    a.cancel.abort();
    b.cancel.abort();
    await settle();
    assert.equal(await a.outcome, 'resolved');
    assert.equal(await b.outcome, 'resolved');
  });

  test('a term runs renewDeadline from the write that won it, not from a slow read before it', async () => {
    const { clock, store, candidate } = setup();
    let answer!: () => void;
    const a = candidate('a', { readGate: new Promise<void>((r) => (answer = r)) });
    // The read hangs for 5 s (a proxy that went quiet and came back); the write is then quick.
    await advanceTo(clock, 5_000);
    assert.equal(a.elector.isLeader(), false);
    answer();
    await settle();
    assert.equal(a.startedAt, 5_000);
    assert.equal(store.writes.length, 1);
    a.lock.failing = true;
    // No standby can have seen the hold before the write was sent at 5 s: the term lasts until 15 s.
    await advanceTo(clock, 14_990);
    assert.equal(a.leadingAbortedAt, undefined, 'still leading 10 s after the read began');
    await advanceTo(clock, 15_000);
    assert.equal(a.leadingAbortedAt, 15_000);
    await settle();
    const outcome = await a.outcome;
    assert.ok(outcome instanceof LeadershipLostError);
    assert.match(outcome.message, /within renewDeadline \(10000ms\)/);
  });

  test('a renewal retried after Retry-After dates the hold from the retry the server served', async () => {
    const { clock, candidate } = setup();
    const a = candidate('a');
    await advanceTo(clock, 4_500); // acquired at 0, renewed at 2000 and 4000
    a.lock.refuseNextWriteForMs = 5_000;
    await advanceTo(clock, 11_500); // the renewal sent at 6000 is refused, sent again at 11000 and served
    assert.equal(a.lock.calls.update, 3);
    assert.equal(a.leadingAbortedAt, undefined);
    a.lock.failing = true;
    // Dated from the first try (6000), the term would end at 16000; the server wrote after 11000.
    await advanceTo(clock, 20_990);
    assert.equal(a.leadingAbortedAt, undefined, 'still leading at 16000 and after');
    await advanceTo(clock, 21_000);
    assert.equal(a.leadingAbortedAt, 21_000);
    assert.ok((await a.outcome) instanceof LeadershipLostError);
  });

  test('a leader that sees another holder stops at once instead of waiting for the deadline', async () => {
    const { clock, store, candidate } = setup();
    const a = candidate('a');
    await advanceTo(clock, 1_000);
    const state = store.read()!;
    store.write({ ...state.record, holderIdentity: 'intruder', leaderTransitions: 1 }, state.resourceVersion);

    await advanceTo(clock, 2_000); // a's next renewal
    assert.equal(a.leadingAbortedAt, 2_000);
    await settle();
    const outcome = await a.outcome;
    assert.ok(outcome instanceof LeadershipLostError);
    assert.match(outcome.message, /taken over by intruder/);
    assert.equal(store.record?.holderIdentity, 'intruder', 'did not write over the new holder');
  });

  test('a failing onStartedLeading ends leadership, releases, and rejects run()', async () => {
    const clock = new FakeClock();
    const store = new LeaseStore();
    const elector = new LeaderElector({ leaseName: 'l', namespace: 'ns', identity: 'a' }, new FakeLock(store, clock), {
      clock,
      wallClock: () => new Date(EPOCH + clock.now()),
      random: () => 0,
    });
    let stopped = 0;
    const boom = new Error('controllers failed to start');
    const outcome = elector
      .run({ onStartedLeading: async () => Promise.reject(boom), onStoppedLeading: () => stopped++ }, new AbortController().signal)
      .then(
        () => 'resolved',
        (err: unknown) => err,
      );
    await settle();
    assert.equal(await outcome, boom);
    assert.equal(stopped, 1);
    assert.equal(elector.isLeader(), false);
    assert.equal(store.record?.holderIdentity, '');
  });
});

/** A KubeLeaseLock as the manager builds it (restLeaseApi over a RestClient), against `server`. */
function leaseLockOn(t: { after(fn: () => unknown): void }, server: Server, timeoutMs?: number): KubeLeaseLock {
  return new KubeLeaseLock(restLeaseApi(restClientOn(t, server), timeoutMs), 'ns', 'lease1');
}

describe('KubeLeaseLock', () => {
  test('speaks coordination.k8s.io/v1 with MicroTime, 404 and 409 mapping, and keeps metadata', async (t) => {
    let stored: V1Lease | undefined;
    const requests: Array<{ method: string; body: V1Lease | undefined }> = [];
    const serve = async (req: IncomingMessage, res: ServerResponse): Promise<void> => {
      let raw = '';
      for await (const chunk of req) raw += chunk;
      const body = raw ? (JSON.parse(raw) as V1Lease) : undefined;
      requests.push({ method: req.method!, body });
      const reply = (code: number, obj: unknown) => {
        res.writeHead(code, { 'content-type': 'application/json' });
        res.end(JSON.stringify(obj));
      };
      const status = (code: number, reason: string) => reply(code, { kind: 'Status', apiVersion: 'v1', status: 'Failure', reason, code });
      if (req.url?.startsWith('/apis/coordination.k8s.io/v1/namespaces/ns/leases/lease1') && req.method === 'GET') {
        return stored ? reply(200, stored) : status(404, 'NotFound');
      }
      if (req.url?.startsWith('/apis/coordination.k8s.io/v1/namespaces/ns/leases') && req.method === 'POST') {
        if (stored) return status(409, 'AlreadyExists');
        stored = { ...body, metadata: { ...body!.metadata, resourceVersion: '1', labels: { team: 'x' } } };
        return reply(201, stored);
      }
      if (req.url?.startsWith('/apis/coordination.k8s.io/v1/namespaces/ns/leases/lease1') && req.method === 'PUT') {
        if (body!.metadata!.resourceVersion !== stored!.metadata!.resourceVersion) return status(409, 'Conflict');
        stored = { ...body, metadata: { ...body!.metadata, resourceVersion: String(Number(body!.metadata!.resourceVersion) + 1) } };
        return reply(200, stored);
      }
      status(400, 'BadRequest');
    };
    // A fault in the fake answers 500, so the call under test fails at once instead of hanging.
    const server = createServer((req, res) => {
      serve(req, res).catch((err: unknown) => res.writeHead(500).end(String(err)));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => server.close());
    const lock = leaseLockOn(t, server);

    assert.equal(await lock.get(), undefined, '404 means no lease');

    const record: LeaderRecord = {
      holderIdentity: 'a',
      leaseDurationSeconds: 15,
      acquireTime: '2030-01-01T00:00:00.123000Z',
      renewTime: '2030-01-01T00:00:00.123000Z',
      leaderTransitions: 0,
    };
    const created = await lock.create(record);
    assert.equal(created.resourceVersion, '1');
    assert.deepEqual(created.record, record);
    // MicroTime as on the wire: RFC 3339 text, whatever client-node's type (a Date) says.
    const sent = requests.at(-1)!.body!;
    assert.equal(sent.spec!.renewTime, '2030-01-01T00:00:00.123000Z', 'six fractional digits, as MicroTime requires');
    assert.equal(sent.spec!.leaseTransitions, 0);

    await assert.rejects(lock.create(record), LeaseConflictError);

    const read = await lock.get();
    assert.equal(read?.record.holderIdentity, 'a');
    const updated = await lock.update({ ...record, renewTime: '2030-01-01T00:00:02.000000Z' }, read.resourceVersion);
    assert.equal(updated.resourceVersion, '2');
    assert.deepEqual(requests.at(-1)!.body!.metadata!.labels, { team: 'x' }, 'labels survive the replace');

    await assert.rejects(lock.update(record, '1'), LeaseConflictError, 'a stale resourceVersion is a conflict');
  });

  test("bounds each call with the api's timeout", async (t) => {
    const server = createServer(() => {}); // accepts, never answers
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => server.close());
    t.after(() => server.closeAllConnections());
    const lock = leaseLockOn(t, server, 100);
    const started = performance.now();
    await assert.rejects(lock.get(), /timed out after 100 ms/);
    const elapsed = performance.now() - started;
    assert.ok(elapsed >= 90 && elapsed < 5_000, `rejected after ${elapsed} ms`);
  });
});
