import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { appendedSince } from '../../scripts/bench/apiwrites.js';

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
