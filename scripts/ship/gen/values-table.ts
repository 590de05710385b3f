/**
 * Writes the values table into README.md ("Configure"), from infra/values.schema.json
 * (scripts/ship/gen/values-table-text.ts makes it). Run it after `npm run gen:values-schema`:
 *
 *   npx tsx scripts/ship/gen/values-table.ts           # rewrites the table between the README's markers
 *   npx tsx scripts/ship/gen/values-table.ts --check   # writes nothing; exit 1 when the README's table is stale
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { expectedReadme, README_FILE } from './values-table-text.js';

const expected = expectedReadme();
if (readFileSync(README_FILE, 'utf8') === expected) {
  process.exitCode = 0;
} else if (process.argv.includes('--check')) {
  console.error('README.md: the values table is out of date: run `npx tsx scripts/ship/gen/values-table.ts`');
  process.exitCode = 1;
} else {
  writeFileSync(README_FILE, expected);
  console.error('wrote the values table into README.md');
}
