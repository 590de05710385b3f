/**
 * How informer events become queue keys. Keys, not events: the queue de-duplicates them, and the
 * reconciler re-reads the current state anyway.
 */
import type { ObjectMeta } from '../../api/schema.js';

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta | { name?: string; namespace?: string; generation?: number; ownerReferences?: ObjectMeta['ownerReferences']; labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: string | Date; uid?: string; resourceVersion?: string };
}

export interface EventHandler<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

/** Anything that delivers object events: an informer, or several for several namespaces. */
export interface EventSource<T> {
  addEventHandler(handler: EventHandler<T>): void;
}

export function objectKey(obj: KubeObject): string {
  const ns = obj.metadata?.namespace;
  return ns ? `${ns}/${obj.metadata?.name}` : `${obj.metadata?.name}`;
}

/**
 * controller-runtime's GenerationChangedPredicate, plus what the reconciler also acts on:
 * a deletion starting. Status-only writes (ours included) do not bump generation, so they do
 * not wake the controller. A resync delivers the same object twice and always passes.
 */
export function generationOrDeletionChanged(oldObj: KubeObject, newObj: KubeObject): boolean {
  if (oldObj === newObj) return true;
  return (
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
