/**
 * Does `actual` already hold everything `desired` says? Fields the server (or another manager)
 * added are ignored; only what we would write counts. This is how a reconcile decides that there
 * is nothing to write, so a restart over reconciled objects writes nothing.
 */
export function containsDesired(desired: unknown, actual: unknown): boolean {
  if (desired === undefined) return true;
  if (desired === null || typeof desired !== 'object') return normalize(desired) === normalize(actual);
  // Loops rather than entries().every(): every status write and every owned object's check passes
  // here, and the pairs arrays were most of its cost in a backlog's profile.
  if (Array.isArray(desired)) {
    if (!Array.isArray(actual) || actual.length !== desired.length) return false;
    for (let i = 0; i < desired.length; i++) if (!containsDesired(desired[i], actual[i])) return false;
    return true;
  }
  if (actual === null || typeof actual !== 'object' || Array.isArray(actual)) return false;
  const want = desired as Record<string, unknown>;
  const have = actual as Record<string, unknown>;
  for (const k of Object.keys(want)) if (!containsDesired(want[k], have[k])) return false;
  return true;
}

/**
 * Whether `actual` holds list entries beyond `desired`'s: a list longer than the desired one at the
 * same place, or holding an entry named differently from every desired one (lists of named entries,
 * such as containers, env and volumes, merge by name in an apply). A server-side apply cannot remove
 * such entries when another field manager owns them (a container added by hand, or by another
 * program under another name): only replacing the list does.
 */
export function hasExtraListItems(desired: unknown, actual: unknown): boolean {
  if (Array.isArray(desired)) {
    if (!Array.isArray(actual)) return false;
    if (actual.length > desired.length) return true;
    const names = new Set(desired.map(nameOf));
    if (actual.some((a) => nameOf(a) !== undefined && !names.has(nameOf(a)))) return true;
    return desired.some((d, i) => hasExtraListItems(d, actual[i]));
  }
  if (desired === null || typeof desired !== 'object' || actual === null || typeof actual !== 'object' || Array.isArray(actual)) {
    return false;
  }
  return Object.entries(desired as Record<string, unknown>).some(([k, v]) => hasExtraListItems(v, (actual as Record<string, unknown>)[k]));
}

/** The `name` of a list entry that has one (the merge key of most Kubernetes lists). */
function nameOf(entry: unknown): string | undefined {
  const name = entry !== null && typeof entry === 'object' ? (entry as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name : undefined;
}

/** The API serves quantities and times in canonical forms; compare them as strings. */
function normalize(v: unknown): unknown {
  return v instanceof Date ? v.toISOString() : v;
}

/** Deep equality of JSON values (status comparison). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  return containsDesired(a, b) && containsDesired(b, a);
}
