/**
 * Debian's apt on the build machine, for what the project installs or fetches through it: missing
 * packages are installed once (`apt-get update` only when apt does not know them), a foreign
 * architecture (arm64 for the release image's packages) is added once, with the `apt-get update`
 * that makes apt list its packages. Each step needs root; each refusal names the command to run.
 */
import { spawnSync } from 'node:child_process';
import { ControlPlaneError } from './errors.js';

export function aptGet(args: string[]): { ok: boolean; output: string } {
  const r = spawnSync('apt-get', args, {
    encoding: 'utf8',
    maxBuffer: 16 << 20,
    timeout: 900_000,
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  return { ok: r.status === 0, output: `${r.stdout ?? ''}${r.stderr ?? ''}${r.error ? r.error.message : ''}` };
}

const tail = (output: string): string => output.trim().split('\n').slice(-10).join('\n  ');

let updated = false;

/** `apt-get update`, at most once per process; throws with apt's last lines when it fails. */
export function aptUpdate(log: (line: string) => void): void {
  if (updated) return;
  log('apt: apt-get update');
  const update = aptGet(['update', '-q']);
  if (!update.ok) throw new ControlPlaneError('`apt-get update` failed.', tail(update.output));
  updated = true;
}

function missingPackages(packages: Record<string, string>): string[] {
  return Object.keys(packages).filter((pkg) => {
    const q = spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' });
    return !q.stdout.includes('install ok installed');
  });
}

/**
 * Installs the Debian packages (name -> what they are for) that are missing, with apt-get, once;
 * `apt-get update` only when apt does not know them. Throws a ControlPlaneError when it cannot.
 */
export function ensureDebianPackages(packages: Record<string, string>, log: (line: string) => void): void {
  const missing = missingPackages(packages);
  if (missing.length === 0) return;
  log(`apt: installing ${missing.join(', ')} (${missing.map((m) => packages[m]).join('; ')})`);
  const install = ['install', '-y', '-q', '--no-install-recommends', ...missing];
  let result = aptGet(install);
  if (!result.ok) {
    aptUpdate(log);
    result = aptGet(install);
  }
  if (!result.ok) throw new ControlPlaneError(`\`apt-get install ${missing.join(' ')}\` failed.`, tail(result.output));
}

/** dpkg's native architecture and the foreign ones added (`amd64`, `arm64`, ...). */
export function aptArchitectures(): string[] {
  const native = spawnSync('dpkg', ['--print-architecture'], { encoding: 'utf8' }).stdout?.trim();
  const foreign = spawnSync('dpkg', ['--print-foreign-architectures'], { encoding: 'utf8' }).stdout ?? '';
  return [native, ...foreign.split('\n')].filter((a): a is string => !!a);
}

/**
 * Makes apt serve packages of `architecture`: `dpkg --add-architecture` and `apt-get update` when
 * dpkg does not have it yet (this installs nothing). Throws naming the commands when not root.
 */
export function ensureForeignArchitecture(architecture: string, log: (line: string) => void): void {
  if (aptArchitectures().includes(architecture)) return;
  if (process.getuid?.() !== 0)
    throw new ControlPlaneError(
      `apt does not serve ${architecture} packages here, and adding the architecture needs root: ` +
        `run \`dpkg --add-architecture ${architecture} && apt-get update\` as root.`,
    );
  log(`apt: dpkg --add-architecture ${architecture} (the image's ${architecture} packages come through apt)`);
  const add = spawnSync('dpkg', ['--add-architecture', architecture], { encoding: 'utf8' });
  if (add.status !== 0) throw new ControlPlaneError(`\`dpkg --add-architecture ${architecture}\` failed.`, tail(add.stderr ?? ''));
  updated = false;
  aptUpdate(log);
}
