/**
 * Names of the objects we create, derived from their owner so that a retried or repeated
 * reconcile finds the object it made instead of making another.
 */
import { createHash } from 'node:crypto';

/** 10 lowercase base-36 characters of SHA-256: ~52 bits, collisions are not a practical concern. */
export function shortHash(...parts: string[]): string {
  const digest = createHash('sha256').update(parts.join('\u0000')).digest();
  return BigInt(`0x${digest.subarray(0, 8).toString('hex')}`)
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
