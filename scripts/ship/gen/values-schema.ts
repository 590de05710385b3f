/**
 * Writes infra/values.schema.json (Helm's name for it, beside values.yaml) from the values schema
 * in infra/values-schema.ts, so editors and CI tools validate values.yaml as the synth does.
 * `--check` writes nothing and exits 1 when the file differs from what the schema generates.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { VALUES_SCHEMA_FILE, valuesJsonSchemaText } from '../../../infra/values-schema.js';

const check = process.argv.includes('--check');
const content = await valuesJsonSchemaText();
let current = '';
try {
  current = readFileSync(VALUES_SCHEMA_FILE, 'utf8');
} catch {
  /* missing counts as drift */
}
if (current === content) {
  process.exitCode = 0;
} else if (check) {
  console.error('infra/values.schema.json is out of date: run `npm run gen:values-schema`');
  process.exitCode = 1;
} else {
  writeFileSync(VALUES_SCHEMA_FILE, content);
  console.error('wrote infra/values.schema.json');
}
