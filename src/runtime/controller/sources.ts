/**
 * How informer events become queue keys. Keys, not events: the queue de-duplicates them, and the
 * reconciler re-reads the current state anyway.
 */
import type { EventHandler, EventSource } from '../cache/handler.js';
import { objectKey, type KubeObject } from '../cache/store.js';

export { objectKey, type EventHandler, type EventSource, type KubeObject };

/** The key of obj's controller owner when that owner is of `ownerKind` in `ownerGroup`. */
export function controllerOwnerKey(obj: KubeObject, ownerGroup: string, ownerKind: string): string | undefined {
  const ref = obj.metadata?.ownerReferences?.find((r) => r.controller);
  if (!ref || ref.kind !== ownerKind || ref.apiVersion.split('/')[0] !== ownerGroup) return undefined;
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${ref.name}` : ref.name;
}
