/**
 * The campaign's only source of randomness: mulberry32, a 32-bit seeded PRNG (tiny, fast, good
 * enough to spread fault parameters; not cryptographic). The same seed gives the same sequence on
 * every machine and Node version, which is what makes a schedule replayable from its seed.
 */

/** A function returning numbers in [0, 1), determined by `seed` alone. */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A 32-bit seed derived from a parent seed and a name (FNV-1a over both): stable, well spread. */
export function deriveSeed(parent: number, name: string): number {
  let h = 0x811c9dc5;
  for (const ch of `${parent >>> 0}/${name}`) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  // One mulberry32 step mixes the low bits that FNV leaves correlated for similar names.
  return Math.floor(mulberry32(h)() * 4294967296) >>> 0;
}

/** An integer in [min, max], both included. */
export function intBetween(random: () => number, min: number, max: number): number {
  return min + Math.floor(random() * (max - min + 1));
}

/** One element of a non-empty list. */
export function pick<T>(random: () => number, items: readonly T[]): T {
  if (items.length === 0) throw new RangeError('pick: empty list');
  return items[Math.floor(random() * items.length)]!;
}
