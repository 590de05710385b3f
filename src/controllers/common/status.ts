/**
 * Writing an object's status subresource, only when it changed.
 */
import type { ResourceType } from '../../kube/resources.js';
import { resourcePath } from '../../kube/resources.js';
import { jsonEqual } from './compare.js';
import type { ApiWriter } from './ports.js';

interface StatusOwner {
  metadata: { name?: string; namespace?: string; resourceVersion?: string };
}

/**
 * A JSON merge patch from `current` to `desired` (fields that disappeared are set to null), or
 * undefined when they are equal.
 */
export function statusPatch<S extends object>(current: S | undefined, desired: S): Record<string, unknown> | undefined {
  if (current && jsonEqual(desired, current)) return undefined;
  const patch: Record<string, unknown> = { ...(desired as Record<string, unknown>) };
  for (const key of Object.keys(current ?? {})) if (!(key in desired)) patch[key] = null;
  for (const [key, value] of Object.entries(patch)) if (value === undefined) patch[key] = null;
  return patch;
}

/**
 * Patches obj's status from `current` to `desired`, conditional on obj's resourceVersion. Resolves
 * with the object as the server stored it, or undefined when there was nothing to write; what it
 * wrote is handed to `wrote` (the cache's read-your-writes) before it resolves.
 */
export async function writeStatus<S extends object, T extends StatusOwner>(
  api: ApiWriter,
  type: ResourceType,
  obj: T,
  current: S | undefined,
  desired: S,
  signal: AbortSignal,
  wrote?: (obj: T) => void,
): Promise<T | undefined> {
  const patch = statusPatch(current, desired);
  if (!patch) return undefined;
  const written = await api.request<T>('PATCH', resourcePath(type, obj.metadata.namespace, obj.metadata.name, 'status'), {
    // The resourceVersion makes the patch conditional: a status computed from a stale copy (the
    // cache lagging behind our own last write) gets 409 and is recomputed, instead of undoing it.
    body: { metadata: { resourceVersion: obj.metadata.resourceVersion }, status: patch },
    contentType: 'application/merge-patch+json',
    signal,
  });
  wrote?.(written);
  return written;
}
