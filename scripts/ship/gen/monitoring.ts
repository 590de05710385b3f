/**
 * Writes the monitoring files of scripts/ship/gen/monitoring-files.ts (the plain alert rules file, ...).
 * `--check` writes nothing and exits 1 when a file differs from what the code generates.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { MONITORING_FILES } from './monitoring-files.js';

const check = process.argv.includes('--check');
let drift = 0;
for (const file of MONITORING_FILES) {
  const content = file.content();
  let current = '';
  try {
    current = readFileSync(file.path, 'utf8');
  } catch {
    /* missing counts as drift */
  }
  if (current === content) continue;
  drift++;
  if (check) {
    console.error(`${file.path} is out of date: run \`npm run gen:monitoring\``);
  } else {
    mkdirSync(dirname(file.path), { recursive: true });
    writeFileSync(file.path, content);
    console.error(`wrote ${file.path}`);
  }
}
process.exitCode = check && drift ? 1 : 0;
