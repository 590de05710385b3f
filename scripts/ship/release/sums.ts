/**
 * SHA256SUMS as GNU coreutils writes it (`sha256sum FILE...`, text mode): one line per file,
 * "<64 hex digits>  <name>", so `sha256sum -c SHA256SUMS` checks a downloaded release.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { join } from 'node:path';

export const SUMS_FILE = 'SHA256SUMS';

/** The file's text for these name -> hex digest pairs, ordered by name. */
export function formatSums(digests: Record<string, string>): string {
  return Object.keys(digests)
    .sort()
    .map((name) => {
      if (!/^[0-9a-f]{64}$/.test(digests[name]!)) throw new Error(`${name}: not a sha256 hex digest`);
      // sha256sum escapes a name with a backslash or newline; a release never has one.
      if (/[\\\n]/.test(name)) throw new Error(`${JSON.stringify(name)}: a name sha256sum would escape`);
      return `${digests[name]}  ${name}\n`;
    })
    .join('');
}

export function sha256File(path: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(path)
      .on('data', (chunk) => hash.update(chunk))
      .on('error', reject)
      .on('end', () => resolve(hash.digest('hex')));
  });
}

/** The sums of `names` (files in `dir`), as the file's text. */
export async function sumsOf(dir: string, names: string[]): Promise<string> {
  const digests: Record<string, string> = {};
  for (const name of names) digests[name] = await sha256File(join(dir, name));
  return formatSums(digests);
}
