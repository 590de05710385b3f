/**
 * Writing an object's status subresource, only when it changed.
 */
import type { KubeObject } from '../../kube/object.js';
import type { ResourceType } from '../../kube/resources.js';
import { keyOf, type Client } from '../client/client.js';
import { jsonEqual } from './compare.js';

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

export interface StatusWrite<T extends KubeObject, S extends object> {
  client: Client;
  type: ResourceType<T>;
  /** The object as last read; the write is conditional on its resourceVersion. */
  object: T;
  /** The status the object has (undefined: none yet). */
  current: S | undefined;
  desired: S;
  signal: AbortSignal;
  /** Told what was written before writeStatus resolves (the cache's read-your-writes). */
  wrote?: (obj: T) => void;
}

/**
 * Patches the object's status from `current` to `desired`, conditional on its resourceVersion.
 * Resolves with the object as the server stored it, or undefined when there was nothing to write.
 */
export async function writeStatus<T extends KubeObject, S extends object>(w: StatusWrite<T, S>): Promise<T | undefined> {
  const patch = statusPatch(w.current, w.desired);
  if (!patch) return undefined;
  // The resourceVersion makes the patch conditional: a status computed from a stale copy (the
  // cache lagging behind our own last write) gets 409 and is recomputed, instead of undoing it.
  const written = await w.client.patchStatus(
    w.type,
    keyOf(w.object),
    { status: patch },
    {
      resourceVersion: w.object.metadata?.resourceVersion,
      signal: w.signal,
    },
  );
  w.wrote?.(written);
  return written;
}
