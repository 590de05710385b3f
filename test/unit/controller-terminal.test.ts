/**
 * TerminalError in the Controller (controller-runtime's reconcile.TerminalError): not retried,
 * its backoff forgotten, counted as an error and a terminal error, logged once; a change wakes
 * the key again; recheckAfterMs looks again once after that long. Driven by the fake clock.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  Controller,
  isTerminalError,
  TerminalError,
  terminalErrorIn,
  type ControllerMetrics,
  type ReconcileResult,
} from '../../src/runtime/controller/index.js';
import type { Logger, LogFields } from '../../src/runtime/log.js';
import { FakeClock, flushMicrotasks } from '../../src/runtime/testing/clock.js';

function recordingLogger(lines: { level: string; msg: string; fields?: LogFields }[]): Logger {
  const log: Logger = {
    debug: (msg, fields) => lines.push({ level: 'debug', msg, fields }),
    info: (msg, fields) => lines.push({ level: 'info', msg, fields }),
    warn: (msg, fields) => lines.push({ level: 'warn', msg, fields }),
    error: (msg, fields) => lines.push({ level: 'error', msg, fields }),
    child: () => log,
  };
  return log;
}

function recordingMetrics() {
  const results: ReconcileResult[] = [];
  let terminal = 0;
  const metrics: ControllerMetrics = {
    setMaxConcurrency() {},
    activeWorkers() {},
    reconciled: (_c, result) => void results.push(result),
    terminalError: () => void terminal++,
  };
  return { metrics, results, terminal: () => terminal };
}

/** A controller whose reconciler fails as `fail(call)` says (undefined: succeeds), run on a fake clock. */
function setup(fail: (call: number) => Error | undefined) {
  const clock = new FakeClock();
  const lines: { level: string; msg: string; fields?: LogFields }[] = [];
  const m = recordingMetrics();
  let calls = 0;
  const c = new Controller(
    { name: 't', workers: 1, clock, logger: recordingLogger(lines), metrics: m.metrics },
    {
      reconcile: async () => {
        const err = fail(++calls);
        if (err !== undefined) throw err;
        return undefined;
      },
    },
  );
  const stop = new AbortController();
  const run = c.run({ stop: stop.signal, drainTimeoutMs: 1000 });
  return {
    clock,
    c,
    lines,
    m,
    calls: () => calls,
    async close() {
      stop.abort();
      await clock.step(1000);
      await run;
    },
  };
}

const HOUR = 3_600_000;
const errorLines = <L extends { level: string }>(lines: L[]): L[] => lines.filter((l) => l.level === 'error');

describe('TerminalError', () => {
  it('is found anywhere in the cause chain, as errors.Is finds it', () => {
    const cause = new Error('422 Invalid');
    const terminal = new TerminalError(cause);
    assert.equal(terminal.message, '422 Invalid');
    assert.equal(terminal.cause, cause);
    assert.ok(isTerminalError(terminal));
    assert.equal(terminalErrorIn(new Error('wrapped', { cause: terminal })), terminal);
    assert.ok(!isTerminalError(cause));
    assert.ok(!isTerminalError('a string'));
    const loop = new Error('loop');
    (loop as { cause?: unknown }).cause = loop;
    assert.ok(!isTerminalError(loop), 'a cause cycle ends the search');
    assert.throws(() => new TerminalError(cause, { recheckAfterMs: -1 }), RangeError);
  });
});

describe('Controller and TerminalError', () => {
  it('an ordinary error is retried with backoff (the contrast)', async () => {
    const s = setup(() => new Error('500 boom'));
    s.c.enqueue('ns/a');
    await s.clock.step(0);
    await s.clock.step(HOUR);
    assert.ok(s.calls() > 5, `retried (calls: ${s.calls()})`);
    assert.equal(s.m.terminal(), 0);
    await s.close();
  });

  it('a terminal error is not retried: counted as an error and a terminal error, logged once', async () => {
    const s = setup((call) => (call === 1 ? new TerminalError(new Error('422 Invalid: spec.schedule')) : undefined));
    s.c.enqueue('ns/a');
    await s.clock.step(0);
    await s.clock.step(HOUR);
    assert.equal(s.calls(), 1, 'no retry, however long');
    assert.deepEqual(s.m.results, ['error'], "reconcile_total{result='error'}");
    assert.equal(s.m.terminal(), 1, 'terminal_reconcile_errors_total');
    assert.equal(errorLines(s.lines).length, 1, 'logged once');
    assert.match(String(errorLines(s.lines)[0]!.fields?.error), /spec\.schedule/);
    assert.equal(s.c.queue.len(), 0);

    // A change (the watch enqueues the key) wakes it again.
    s.c.enqueue('ns/a');
    await s.clock.step(0);
    assert.equal(s.calls(), 2);
    assert.deepEqual(s.m.results, ['error', 'success']);
    await s.close();
  });

  it('a terminal error wrapped in another is terminal too', async () => {
    const s = setup(() => new Error('pass failed', { cause: new TerminalError(new Error('400 BadRequest')) }));
    s.c.enqueue('ns/a');
    await s.clock.step(0);
    await s.clock.step(HOUR);
    assert.equal(s.calls(), 1);
    assert.equal(s.m.terminal(), 1);
    await s.close();
  });

  it('forgets the backoff of earlier failures: the next failure after a change starts from the base delay', async () => {
    const s = setup((call) => (call <= 8 ? new Error('500') : call === 9 ? new TerminalError(new Error('422')) : undefined));
    s.c.enqueue('ns/a');
    for (let i = 0; i < 20 && s.calls() < 9; i++) await s.clock.step(60_000);
    assert.equal(s.calls(), 9);
    assert.equal(s.c.queue.numRequeues('ns/a'), 0, 'forgotten');
    await s.close();
  });

  it('recheckAfterMs looks again once after that long, without backoff', async () => {
    let failing = true;
    const s = setup(() => (failing ? new TerminalError(new Error('name taken'), { recheckAfterMs: 300_000 }) : undefined));
    s.c.enqueue('ns/a');
    await s.clock.step(0);
    assert.equal(s.calls(), 1);
    await s.clock.step(299_999);
    assert.equal(s.calls(), 1, 'not before the recheck');
    await s.clock.step(1);
    assert.equal(s.calls(), 2, 'the recheck');
    await s.clock.step(300_000);
    assert.equal(s.calls(), 3, 'the same period again: no backoff growth');
    assert.equal(s.m.terminal(), 3);
    failing = false;
    await s.clock.step(300_000);
    assert.equal(s.calls(), 4, 'cured');
    await s.clock.step(HOUR);
    assert.equal(s.calls(), 4, 'and left alone after success');
    assert.equal(errorLines(s.lines).length, 3, 'one line per failed pass, none between');
    await s.close();
    await flushMicrotasks();
  });
});
