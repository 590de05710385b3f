/**
 * Waiting on a condition with a deadline: the implementation lives in scripts/testbed/eventually.ts so the
 * tooling (which never imports from test/) waits the same way the tests do.
 */
export * from '../../scripts/testbed/eventually.js';
