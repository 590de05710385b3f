/**
 * apt's answers about the archive, read as apt prints them: `apt-cache show`'s stanzas and
 * `apt-get download --print-uris`' lines. Pure.
 */
import type { LockedDeb } from './lock.js';

/** `'URL' FILE SIZE SHA256:HEX`, apt-get's --print-uris line. */
export function parsePrintUris(line: string): Pick<LockedDeb, 'url' | 'filename' | 'size' | 'sha256'> {
  const m = /^'([^']+)' (\S+) (\d+) SHA256:([0-9a-f]{64})$/.exec(line.trim());
  if (!m) throw new Error(`apt-get --print-uris said ${JSON.stringify(line)}`);
  return { url: m[1]!, filename: m[2]!, size: Number(m[3]), sha256: m[4]! };
}

export interface AptStanza {
  name: string;
  architecture: string;
  version: string;
  /** The archive path (`pool/main/g/glibc/libc6_..._arm64.deb`); empty for a version only installed (dpkg's status). */
  filename: string;
  /** Of the .deb; 0 and '' when apt does not say. */
  size: number;
  sha256: string;
}

/** apt-cache show's stanzas. */
export function parseStanzas(text: string): AptStanza[] {
  return text
    .split(/\n\n+/)
    .filter((s) => s.trim())
    .map((stanza) => {
      const field = (key: string): string => new RegExp(`^${key}: (.+)$`, 'm').exec(stanza)?.[1]?.trim() ?? '';
      return {
        name: field('Package'),
        architecture: field('Architecture'),
        version: field('Version'),
        filename: field('Filename'),
        size: Number(field('Size')) || 0,
        sha256: field('SHA256'),
      };
    });
}
