import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { spawnSync } from 'node:child_process';
import { CoalescingStream, createLogger, resolveLogFormat, type LoggerOptions, type LogStream } from '../../src/observability/logging.js';

class Capture implements LogStream {
  readonly chunks: string[] = [];
  constructor(readonly isTTY = false) {}
  write(chunk: string): boolean {
    this.chunks.push(chunk);
    return true;
  }
  get lines(): string[] {
    return this.chunks
      .join('')
      .split('\n')
      .filter((l) => l !== '');
  }
  get json(): Record<string, unknown>[] {
    return this.lines.map((l) => JSON.parse(l) as Record<string, unknown>);
  }
}

const at = new Date('2025-03-04T05:06:07.089Z');

function logger(options: LoggerOptions = {}): { log: ReturnType<typeof createLogger>; out: Capture } {
  const out = (options.stream as Capture | undefined) ?? new Capture();
  return { log: createLogger({ format: 'json', now: () => at, ...options, stream: out }), out };
}

describe('logging: JSON lines', () => {
  it('writes ts, level and msg first, then the fields, one object per line', () => {
    const { log, out } = logger();
    log.info('reconciled', { durationSeconds: 0.012, created: true });
    assert.equal(out.chunks.length, 1);
    assert.ok(out.chunks[0]!.endsWith('\n'));
    assert.equal(
      out.lines[0],
      '{"ts":"2025-03-04T05:06:07.089Z","level":"info","msg":"reconciled","durationSeconds":0.012,"created":true}',
    );
  });

  it('binds fields with child(), nested children adding to them, a call field winning', () => {
    const { log, out } = logger();
    const echo = log.child({ controller: 'echo' });
    const item = echo.child({ namespace: 'ns1', name: 'hello', reconcileID: 'r-1' });
    item.info('job created', { job: 'hello' });
    item.warn('retrying', { name: 'override' });
    echo.info('idle');
    assert.deepEqual(out.json, [
      {
        ts: at.toISOString(),
        level: 'info',
        msg: 'job created',
        controller: 'echo',
        namespace: 'ns1',
        name: 'hello',
        reconcileID: 'r-1',
        job: 'hello',
      },
      { ts: at.toISOString(), level: 'warn', msg: 'retrying', controller: 'echo', namespace: 'ns1', name: 'override', reconcileID: 'r-1' },
      { ts: at.toISOString(), level: 'info', msg: 'idle', controller: 'echo' },
    ]);
  });

  it('writes nothing below the level', () => {
    const { log, out } = logger({ level: 'warn' });
    log.debug('d');
    log.info('i');
    log.child({ a: 1 }).info('i2');
    log.warn('w');
    log.error('e');
    assert.deepEqual(
      out.json.map((e) => e.level),
      ['warn', 'error'],
    );
    const debug = logger({ level: 'debug' });
    debug.log.debug('d');
    assert.equal(debug.out.json[0]!.level, 'debug');
  });

  it('keeps ts, level and msg from being overwritten by fields', () => {
    const { log, out } = logger();
    log.child({ level: 'bound' }).info('real', { msg: 'fake', ts: 1 });
    assert.deepEqual(out.json[0], { ts: at.toISOString(), level: 'info', msg: 'real', _level: 'bound', _msg: 'fake', _ts: 1 });
  });

  it('renders errors as their message with causes, adding a stack only for bugs', () => {
    const { log, out } = logger();
    log.error('create failed', { error: new Error('POST /apis/batch/v1/jobs: 500', { cause: new Error('etcd timeout') }) });
    log.error('bug', { error: new TypeError("Cannot read properties of undefined (reading 'spec')") });
    const [failed, bug] = out.json;
    assert.equal(failed!.error, 'POST /apis/batch/v1/jobs: 500: etcd timeout');
    assert.equal(failed!.errorStack, undefined);
    assert.equal(bug!.error, "Cannot read properties of undefined (reading 'spec')");
    assert.match(String(bug!.errorStack), /^TypeError: Cannot read/);
  });

  it('renders a cause that is not an Error as JSON, not [object Object]', () => {
    const { log, out } = logger();
    log.error('write failed', { error: new Error('PATCH failed', { cause: { code: 409, reason: 'Conflict' } }) });
    log.error('dial failed', { error: new Error('dial', { cause: 'ECONNREFUSED' }) });
    assert.deepEqual(
      out.json.map((l) => l.error),
      ['PATCH failed: {"code":409,"reason":"Conflict"}', 'dial: ECONNREFUSED'],
    );
  });

  it('never throws on values JSON cannot take: cycles, bigint, undefined, functions', () => {
    const { log, out } = logger();
    const cyclic: Record<string, unknown> = { a: 1 };
    cyclic.self = cyclic;
    assert.doesNotThrow(() => log.info('odd', { cyclic, big: 10n, gone: undefined, fn: () => 1, when: at }));
    assert.deepEqual(out.json[0], {
      ts: at.toISOString(),
      level: 'info',
      msg: 'odd',
      cyclic: { a: 1, self: '[circular]' },
      big: '10',
      when: at.toISOString(),
    });
  });

  it('never throws when the stream fails', () => {
    const broken: LogStream = {
      write() {
        throw new Error('EPIPE');
      },
    };
    assert.doesNotThrow(() => createLogger({ stream: broken, format: 'json' }).error('lost'));
  });
});

describe('logging: text lines', () => {
  it('writes a readable single line with key=value fields, quoting where needed', () => {
    const { log, out } = logger({ format: 'text' });
    log
      .child({ controller: 'echo' })
      .warn('reconcile failed\nretrying', { name: 'hello', error: 'quota exceeded: 3 jobs', n: 3, ok: false, obj: { a: 1 } });
    assert.deepEqual(out.lines, [
      '2025-03-04T05:06:07.089Z WARN  reconcile failed\\nretrying controller=echo name=hello error="quota exceeded: 3 jobs" n=3 ok=false obj={"a":1}',
    ]);
  });

  it('chooses text for a TTY and JSON otherwise when the format is auto', () => {
    assert.equal(resolveLogFormat('auto', new Capture(true)), 'text');
    assert.equal(resolveLogFormat('auto', new Capture(false)), 'json');
    assert.equal(resolveLogFormat('json', new Capture(true)), 'json');
    const tty = new Capture(true);
    createLogger({ format: 'auto', stream: tty, now: () => at }).info('hi');
    assert.equal(tty.lines[0], '2025-03-04T05:06:07.089Z INFO  hi');
  });
});

describe('logging: CoalescingStream', () => {
  it('writes the lines of one event-loop turn in one write, in order', async () => {
    const target = new Capture(true);
    const stream = new CoalescingStream(target);
    assert.equal(stream.isTTY, true);
    const log = createLogger({ format: 'json', now: () => at, stream });
    for (let i = 0; i < 100; i++) log.info('line', { i });
    assert.deepEqual(target.chunks, [], 'nothing written during the turn');
    await new Promise((r) => setImmediate(r));
    assert.equal(target.chunks.length, 1);
    assert.deepEqual(
      target.json.map((e) => e.i),
      Array.from({ length: 100 }, (_, i) => i),
    );
  });

  it('writes at once when the pending lines pass the bound', () => {
    const target = new Capture();
    const stream = new CoalescingStream(target, 10);
    stream.write('12345\n');
    assert.deepEqual(target.chunks, []);
    stream.write('67890\n');
    assert.deepEqual(target.chunks, ['12345\n67890\n']);
  });

  it('flushes what is pending when the process exits', () => {
    const code = `
      import { createLogger } from './src/observability/logging.ts';
      createLogger({ format: 'json' }).error('last words');
      process.exit(3);`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { encoding: 'utf8' });
    assert.equal(r.status, 3);
    assert.match(r.stderr, /"msg":"last words"/);
  });
});
