import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { appendedSince, eventsPerEcho, eventWrites, formatPerEcho, userAgentProduct } from '../../scripts/lab/bench/apiwrites.js';

describe('appendedSince (the benchmarks read the audit log from a mark)', () => {
  it('reads what was appended, and across a rotation the rest of the rotated file, then the new one', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'bench-audit-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const log = join(dir, 'audit.log');
    writeFileSync(log, 'old 1\nold 2\n');
    const mark = statSync(log).size;
    appendFileSync(log, 'a\n');
    assert.equal(appendedSince(log, mark), 'a\n');
    appendFileSync(log, 'b\n');
    // As kube-apiserver's log rotation does: the file moves aside and a new one starts.
    renameSync(log, join(dir, 'audit-2026-11-23T10-00-00.000.log'));
    writeFileSync(join(dir, 'audit-2026-11-22T10-00-00.000.log'), 'an older backup\n');
    writeFileSync(log, 'c\n');
    assert.equal(appendedSince(log, mark), 'a\nb\nc\n');
  });
});

describe('Events per Echo (a column of the peers and throughput tables)', () => {
  it('counts successful creates and patches of Events, nothing else, per Echo', () => {
    const c = {
      total: 0,
      by: { 'create events': 6, 'patch events': 2, 'create events -> 409': 3, 'create jobs': 10, 'patch echos/status': 10 },
    };
    assert.equal(eventWrites(c), 8);
    assert.equal(eventsPerEcho(c, 10), 0.8);
    assert.equal(eventsPerEcho({ total: 0, by: {} }, 10), 0);
    assert.equal(eventsPerEcho(undefined, 10), undefined, 'no audit log');
    assert.deepEqual([formatPerEcho(0.8), formatPerEcho(undefined)], ['0.80', 'n/a']);
  });

  it('tells the writers apart by the product in their User-Agent', () => {
    assert.deepEqual(
      [
        'echoperator/0.1.0 (host)',
        'echoperator-peer/v0.25',
        'kube-controller-manager/v1.34.4 (linux/amd64) kubernetes/abc/system:serviceaccount:x',
        'curl',
      ].map(userAgentProduct),
      ['echoperator', 'echoperator-peer', 'kube-controller-manager', 'curl'],
    );
  });
});
