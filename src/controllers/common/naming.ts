/**
 * Names of the objects we create, derived from their owner so that a retried or repeated
 * reconcile finds the object it made instead of making another.
 */
import * as crypto from 'node:crypto';

/**
 * SHA-256 as hex. crypto.hash (Node 20.12+, Deno 2) is a one-shot call, ~3 x cheaper than a Hash
 * object, and every reconcile of an Echo names its Job; createHash serves older runtimes.
 */
const sha256Hex: (data: string) => string =
  typeof crypto.hash === 'function'
    ? (data) => crypto.hash('sha256', data, 'hex')
    : (data) => crypto.createHash('sha256').update(data).digest('hex');

/** 10 lowercase base-36 characters of SHA-256: ~52 bits, collisions are not a practical concern. */
export function shortHash(...parts: string[]): string {
  return BigInt(`0x${sha256Hex(parts.join('\u0000')).slice(0, 16)}`)
    .toString(36)
    .padStart(13, '0')
    .slice(-10);
}

/**
 * `${base}-${hash}` within maxLength, base truncated as needed, the result a valid DNS-1123
 * label (no '.' nor leading/trailing '-'): Job names become pod label values, limited to 63.
 */
export function derivedName(base: string, hash: string, maxLength: number): string {
  const room = maxLength - hash.length - 1;
  const head = base.replace(/\./g, '-').slice(0, room).replace(/-+$/, '');
  return `${head || 'x'}-${hash}`;
}

/** The owner's own name when it fits, else a truncated name with a hash of the full one. */
export function nameWithin(name: string, maxLength: number): string {
  if (name.length <= maxLength && !name.includes('.')) return name;
  return derivedName(name, shortHash(name), maxLength);
}
