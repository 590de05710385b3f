/**
 * Which of a replica's writes a fault aims at (the late and ambiguous classes): the run's Job
 * create, the Echo's status write (the claim or the record of a run), or any counted write.
 *
 * Pure: a predicate on a request's method and path (without the query).
 */
import { isCountedWrite } from '../proxy/writes.js';

export const WRITE_TARGETS = ['job-create', 'status', 'any'] as const;
export type WriteTarget = (typeof WRITE_TARGETS)[number];

const NAMESPACED = /^\/apis?\/(?:[^/]+\/)?[^/]+\/namespaces\/[^/]+\/([^/]+)(?:\/([^/]+))?(?:\/([^/]+))?$/;

/** `<resource>[/<subresource>]` of a namespaced request path (the path itself when it is not one). */
export function writeResource(path: string): { resource: string; name?: string } {
  const m = NAMESPACED.exec(path);
  if (!m) return { resource: path };
  return { resource: `${m[1]}${m[3] ? `/${m[3]}` : ''}`, ...(m[2] ? { name: m[2] } : {}) };
}

/** Whether a request is a write of the target. */
export function isTargetWrite(target: WriteTarget, method: string, path: string): boolean {
  if (!isCountedWrite(method, path)) return false;
  const { resource } = writeResource(path);
  switch (target) {
    case 'job-create':
      return method === 'POST' && resource === 'jobs';
    case 'status':
      return (method === 'PUT' || method === 'PATCH') && resource === 'echos/status';
    case 'any':
      return true;
  }
}

/** Counts per `<verb> <resource>`, as a report line shows them: "2 POST jobs, 1 PATCH echos/status". */
export function perVerbResource(writes: readonly { verb: string; resource: string }[]): string {
  const counts = new Map<string, number>();
  for (const w of writes) counts.set(`${w.verb} ${w.resource}`, (counts.get(`${w.verb} ${w.resource}`) ?? 0) + 1);
  return [...counts].map(([k, n]) => `${n} ${k}`).join(', ');
}
