/**
 * Waiting on a condition with a deadline: the implementation lives in scripts/eventually.ts so the
 * tooling (which never imports from test/) waits the same way the tests do.
 */
export * from '../../scripts/eventually.js';
