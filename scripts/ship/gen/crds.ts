/**
 * Writes crds/<plural>.mmontes.io.yaml from src/api (the single source of truth).
 * `--check` writes nothing and exits 1 when a file differs from what src/api generates.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderCrdFiles } from '../../../src/api/render.js';
import { CUSTOM_RESOURCES } from '../../../src/controllers/index.js';

const check = process.argv.includes('--check');
let drift = 0;
for (const { file, content } of renderCrdFiles(CUSTOM_RESOURCES)) {
  const path = join('crds', file);
  let current = '';
  try {
    current = readFileSync(path, 'utf8');
  } catch {
    /* missing counts as drift */
  }
  if (current === content) continue;
  if (check) {
    console.error(`crds/${file} is out of date: run \`npm run gen:crds\``);
    drift++;
  } else {
    writeFileSync(path, content);
    console.error(`wrote ${path}`);
  }
}
process.exitCode = drift ? 1 : 0;
