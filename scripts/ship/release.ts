/**
 * `npm run release`: the release folder, dist/release/ (scripts/ship/release/release.ts says what is
 * in it), from the commit the tree is at.
 *
 *   npm run release                               # into dist/release/
 *   npm run release -- --out /tmp/r               # elsewhere
 *   npm run release -- --verify-reproducible      # then a second release into a scratch folder: same bytes, or exit 1
 *   npm run release -- --sign-key cosign.key      # and sign SHA256SUMS (COSIGN_PASSWORD: the key's password)
 *   npm run release -- --push REGISTRY --sign-key cosign.key [--plain-http]
 *                                                 # publish: image, chart, signatures and attestations (release/push.ts)
 *   npm run release -- --development              # a test's release: a locked .deb the archive dropped is
 *                                                 # replaced by the served one, loudly (image/resolve.ts)
 *
 * Without --development, a release is its lock (scripts/ship/image/lock.json) or nothing: a locked
 * .deb that neither the cache holds nor the archive serves any longer refuses the release, naming
 * the package, its version and the served one, and `npm run image:lock`.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Command } from 'commander';
import { kib } from './build.js';
import { release, RELEASE_DIR, type ReleaseResult } from './release/release.js';
import { SUMS_FILE } from './release/sums.js';
import { checkRegistry, pushRelease } from './release/push.js';
import { ensureCosign } from './sign/cosign.js';
import { IMAGE_REPOSITORY } from '../../infra/props.js';

function commandLine(): Command {
  return new Command('release')
    .description(
      'Writes the release (image OCI archive, crds.yaml, install.yaml, chart, SBOM, SLSA provenance, SHA256SUMS) from the commit the tree is at; with --push, publishes it.',
    )
    .option('--out <dir>', 'the release folder (emptied first)', RELEASE_DIR)
    .option('--verify-reproducible', 'release a second time into a scratch folder and compare every file')
    .option('--sign-key <file>', "cosign private key: sign SHA256SUMS, and the pushed image's digest (password in COSIGN_PASSWORD)")
    .option(
      '--push <registry>',
      'publish to REGISTRY (host[:port][/path]): the image as REGISTRY/<name>:<version>, the chart as oci://REGISTRY/charts',
    )
    .option('--plain-http', 'talk to the --push registry over HTTP (a registry on the loopback only)')
    .option(
      '--development',
      'a test build, not a release: a locked .deb the archive no longer serves is replaced by the served version, with a warning (--push then only with --plain-http)',
    )
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
  const options = program.opts<{
    out: string;
    verifyReproducible?: boolean;
    signKey?: string;
    push?: string;
    plainHttp?: boolean;
    development?: boolean;
  }>();
  const push = options.push && checkRegistry(options.push);
  if (push && !options.signKey)
    throw new Error('--push needs --sign-key <cosign.key>: a published image is signed (make a key with `cosign generate-key-pair`)');
  if (options.plainHttp && !push) throw new Error('--plain-http applies to --push only');
  if (options.development && push && !options.plainHttp)
    throw new Error('--development builds are not published: with --push, only to a loopback registry (--plain-http)');
  const inputs = options.development ? 'development' : 'release';
  const log = (line: string): void => console.error(line);
  const signKey = options.signKey && resolve(options.signKey);
  const cosign = signKey ? { cosign: await ensureCosign(log), plainHttp: options.plainHttp } : undefined;
  const repository = push ? `${push}/${IMAGE_REPOSITORY.split('/').pop()!}` : undefined;
  const first = await release(resolve(options.out), log, { repository, signKey, cosign, inputs });
  console.log(summary(first));
  if (push) {
    const pushed = await pushRelease(
      { ...first, archive: first.archive, version: first.provenance.version, repository: first.repository },
      { registry: push, plainHttp: options.plainHttp ?? false, key: signKey!, cosign: cosign!, log },
    );
    console.log(`published: image ${pushed.image}, chart ${pushed.chart} --version ${first.provenance.version}`);
  }
  if (!options.verifyReproducible) return;
  const scratch = mkdtempSync(join(tmpdir(), 'echoperator-release-'));
  try {
    const second = await release(scratch, log, { inputs });
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
