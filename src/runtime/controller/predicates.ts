/**
 * Event filters (controller-runtime's predicate.Funcs): which of a source's events wake a
 * controller. A method left out lets every event of that kind through, and so does a source
 * without a predicate (controller-runtime's default). A resync delivers an object as an update
 * to itself (the same object twice); a filter that drops it drops the resync.
 */
import type { KubeObject } from '../cache/store.js';

export interface Predicate<T> {
  create?(obj: T): boolean;
  update?(oldObj: T, newObj: T): boolean;
  delete?(obj: T): boolean;
}

/** The fields generationChangedOrDeleted reads, beyond what the cache keeps for every object. */
export type Watched = KubeObject & { metadata?: { generation?: number; deletionTimestamp?: unknown; uid?: string } };

/**
 * controller-runtime's GenerationChangedPredicate, plus what a reconciler of a primary object also
 * acts on: a deletion starting, a new UID. Status-only writes (ours included) do not bump
 * generation, so they do not wake the controller. A resync always passes.
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

/** Creates and deletes, and the updates generationOrDeletionChanged passes. */
export const generationChangedOrDeleted: Predicate<Watched> = { update: generationOrDeletionChanged };
