/**
 * The add-ons a test file needs (scripts/testbed/controlplane/addon-builds.ts): `npm test` builds them in
 * the background while other files run, so a file that needs one waits for it at its top level,
 * before its first test and outside every test's timeout.
 */
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADD_ON_BUILDS, addOnsFor } from '../../scripts/testbed/controlplane/addon-builds.js';

/** Resolves once every add-on the file at `moduleUrl` (its import.meta.url) needs is built. */
export async function addOnsReady(moduleUrl: string): Promise<void> {
  const file = relative(process.cwd(), fileURLToPath(moduleUrl));
  const names = addOnsFor([file]);
  if (names.length === 0)
    throw new Error(`${file} needs no add-on: nothing to wait for (see scripts/testbed/controlplane/addon-builds.ts)`);
  for (const name of names) await ADD_ON_BUILDS[name].ensure((line) => console.error(line));
}
