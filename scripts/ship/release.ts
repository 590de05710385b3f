/**
 * `npm run release`: the release folder, dist/release/ (scripts/ship/release/release.ts says what is
 * in it), from the commit the tree is at.
 *
 *   npm run release                               # into dist/release/
 *   npm run release -- --out /tmp/r               # elsewhere
 *   npm run release -- --verify-reproducible      # then a second release into a scratch folder: same bytes, or exit 1
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { kib } from './build.js';
import { release, RELEASE_DIR, type ReleaseResult } from './release/release.js';
import { SUMS_FILE } from './release/sums.js';

function commandLine(): Command {
  return new Command('release')
    .description('Writes the release (image OCI archive, crds.yaml, install.yaml, SBOM, SHA256SUMS) from the commit the tree is at.')
    .option('--out <dir>', 'the release folder (emptied first)', RELEASE_DIR)
    .option('--verify-reproducible', 'release a second time into a scratch folder and compare every file')
    .allowExcessArguments(false);
}

function summary(r: ReleaseResult): string {
  const files = Object.entries(r.files).map(([name, bytes]) => `  ${name}  ${bytes} bytes (${kib(bytes)})`);
  return [
    `${r.dir}: echoperator ${r.provenance.version} at ${r.provenance.revision}, image ${r.digest}`,
    ...files,
    `in ${(r.ms / 1000).toFixed(1)} s`,
  ].join('\n');
}

async function main(argv: string[]): Promise<void> {
  // --help prints usage and exits 0; an unknown or incomplete argument exits 1 with its error.
  const program = commandLine().parse(argv, { from: 'user' });
  const options = program.opts<{ out: string; verifyReproducible?: boolean }>();
  const log = (line: string): void => console.error(line);
  const first = await release(resolve(options.out), log);
  console.log(summary(first));
  if (!options.verifyReproducible) return;
  const scratch = mkdtempSync(join(tmpdir(), 'echoperator-release-'));
  try {
    const second = await release(scratch, log);
    console.log(summary(second));
    const sums = (dir: string): string => readFileSync(join(dir, SUMS_FILE), 'utf8');
    if (second.digest !== first.digest || sums(scratch) !== sums(first.dir)) {
      console.error(
        `not reproducible: image ${first.digest} then ${second.digest}; ${SUMS_FILE}:\n${sums(first.dir)}then\n${sums(scratch)}`,
      );
      process.exitCode = 1;
      return;
    }
    console.log(`reproducible: both releases have image ${first.digest} and the same ${SUMS_FILE}`);
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}

main(process.argv.slice(2)).catch((err: unknown) => {
  console.error(`release failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
});
