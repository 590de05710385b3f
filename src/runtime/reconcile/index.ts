/**
 * The reconcile kit: what a reconciler of a primary object with a status shares with every other
 * (the PrimaryReconciler frame, status writes only when changed, conditions, failure reporting,
 * the stall classification, guarded server-side apply, comparison of desired and actual).
 */
export * from './apply.js';
export * from './compare.js';
export * from './conditions.js';
export * from './failure.js';
export * from './primary.js';
export * from './stalled.js';
export * from './status.js';
export * from './time.js';
