/**
 * A temporary directory for one test file, removed when that file's tests are done (node:test's
 * `after`), so a test run leaves nothing in the system's temp directory.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { after } from 'node:test';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `${prefix}-`));
  after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}
