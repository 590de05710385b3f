/**
 * How informer events become queue keys. Keys, not events: the queue de-duplicates them, and the
 * reconciler re-reads the current state anyway.
 */
import type { EventHandler, EventSource } from '../cache/handler.js';
import { objectKey, type KubeObject } from '../cache/store.js';

export { objectKey, type EventHandler, type EventSource, type KubeObject };

/** The fields the predicates below read, beyond what the cache keeps for every object. */
type Watched = KubeObject & { metadata?: { generation?: number; deletionTimestamp?: unknown; uid?: string } };

/**
 * controller-runtime's GenerationChangedPredicate, plus what the reconciler also acts on:
 * a deletion starting, a new UID. Status-only writes (ours included) do not bump generation, so they do
 * not wake the controller. A resync delivers the same object twice and always passes.
 */
export function generationOrDeletionChanged(oldObj: Watched, newObj: Watched): boolean {
  if (oldObj === newObj) return true;
  return (
    // Deleted and re-created while we were re-listing: a new object, even at the same generation.
    oldObj.metadata?.uid !== newObj.metadata?.uid ||
    oldObj.metadata?.generation !== newObj.metadata?.generation ||
    Boolean(oldObj.metadata?.deletionTimestamp) !== Boolean(newObj.metadata?.deletionTimestamp)
  );
}

/** The key of obj's controller owner when that owner is of `ownerKind` in `ownerGroup`. */
export function controllerOwnerKey(obj: KubeObject, ownerGroup: string, ownerKind: string): string | undefined {
  const ref = obj.metadata?.ownerReferences?.find((r) => r.controller);
  if (!ref || ref.kind !== ownerKind || ref.apiVersion.split('/')[0] !== ownerGroup) return undefined;
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${ref.name}` : ref.name;
}
