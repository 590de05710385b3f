/**
 * RequestAbort (src/kube/requestabort.ts): a request's deadline and its caller's signal as one
 * abort, with an AbortSignal only on demand. Mocked timers; the caller's listeners are counted
 * with node:events' getEventListeners, so a leak on a long-lived signal shows.
 */
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { afterEach, beforeEach, describe, it, mock } from 'node:test';
import { DeadlineExceeded } from '../../src/kube/dial.js';
import { RequestAbort } from '../../src/kube/requestabort.js';

describe('RequestAbort', () => {
  beforeEach(() => mock.timers.enable({ apis: ['setTimeout'] }));
  afterEach(() => mock.timers.reset());

  it('aborts with DeadlineExceeded at its deadline, not before, and runs the hook once', () => {
    const abort = new RequestAbort(1000);
    let hooked = 0;
    abort.onAbort(() => hooked++);
    mock.timers.tick(999);
    assert.equal(abort.aborted, false);
    mock.timers.tick(1);
    assert.equal(abort.aborted, true);
    assert.ok(abort.reason instanceof DeadlineExceeded);
    assert.equal(abort.reason.ms, 1000);
    abort.abort(new Error('later'));
    assert.equal(hooked, 1);
    assert.ok(abort.reason instanceof DeadlineExceeded, 'the first reason stays');
    abort.dispose();
  });

  it("follows the caller's signal, and lets go of it on dispose", () => {
    const caller = new AbortController();
    const abort = new RequestAbort(1000, caller.signal);
    assert.equal(getEventListeners(caller.signal, 'abort').length, 1);
    abort.dispose();
    assert.equal(getEventListeners(caller.signal, 'abort').length, 0);

    const second = new RequestAbort(1000, caller.signal);
    const why = new Error('stopped by the caller');
    caller.abort(why);
    assert.equal(second.aborted, true);
    assert.equal(second.reason, why);
    second.dispose();
  });

  it('is aborted from the start when the caller already was', () => {
    const caller = new AbortController();
    const why = new Error('already');
    caller.abort(why);
    const abort = new RequestAbort(1000, caller.signal);
    assert.equal(abort.aborted, true);
    assert.equal(abort.reason, why);
    assert.equal(abort.signal.aborted, true);
    assert.equal(abort.signal.reason, why);
    abort.dispose();
  });

  it("makes its signal on demand; on abort the request's hook runs before the signal's listeners", () => {
    const abort = new RequestAbort(1000);
    const order: string[] = [];
    abort.signal.addEventListener('abort', () => order.push(`listener saw ${String(abort.reason)}`));
    abort.onAbort(() => order.push('hook'));
    abort.abort('why');
    assert.deepEqual(order, ['hook', 'listener saw why']);
    assert.equal(abort.signal.reason, 'why');
    abort.dispose();
  });

  it('never fires once disposed or once its deadline is stopped (a watch past its headers)', () => {
    const disposed = new RequestAbort(1000);
    disposed.onAbort(() => assert.fail('a disposed abort fired'));
    disposed.dispose();
    const stopped = new RequestAbort(1000);
    stopped.stopDeadline();
    mock.timers.tick(5000);
    assert.equal(disposed.aborted, false);
    assert.equal(stopped.aborted, false);
    stopped.abort('the caller, later');
    assert.equal(stopped.aborted, true);
    stopped.dispose();
  });
});
