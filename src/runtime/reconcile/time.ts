/** API times are RFC 3339 with second precision; client types may hand back Date or string. */
export function apiTime(t: Date | string | null | undefined): string | undefined {
  if (t === undefined || t === null) return undefined;
  return t instanceof Date ? t.toISOString().replace(/\.\d{3}Z$/, 'Z') : t;
}

/** Drops undefined fields, so a status compares equal to the one the server returns. */
export function compact<T extends object>(obj: T): T {
  for (const k of Object.keys(obj) as (keyof T)[]) if (obj[k] === undefined) delete obj[k];
  return obj;
}
