/**
 * Prints, as JSON, the argv that runs the operator as its image runs it (the host platform's
 * image, its own Node, loader and libraries, its Env; scripts/testbed/image-rootfs.ts), for
 * ECHOPERATOR_CMD or BASELINE_CMD:
 *
 *   ECHOPERATOR_CMD="$(npx tsx scripts/lab/bench/image-command.ts)" npm run bench -- peers --parts idle
 *
 * --no-compile-cache: the same image without its code cache (the entrypoint compiles the bundle).
 * The folder is left in the system's temp directory for the bench's runs; its path is on stderr.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { COMPILE_CACHE_DIR } from '../../ship/image/compile-cache.js';
import { operatorImage } from '../../ship/image/operator.js';
import { imageEntrypointArgv, materializeImage } from '../../testbed/image-rootfs.js';

const spec = await operatorImage();
const root = mkdtempSync(join(tmpdir(), 'echoperator-image-'));
materializeImage(spec, root);
console.error(`image ${spec.tag} written to ${root}`);
if (process.argv.includes('--no-compile-cache')) rmSync(join(root, COMPILE_CACHE_DIR), { recursive: true, force: true });
console.log(JSON.stringify(imageEntrypointArgv(spec, root)));
