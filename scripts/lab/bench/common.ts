/**
 * What every benchmark needs, one module per concern: cleanup.ts (everything created is removed
 * again, also on Ctrl-C), env.ts (the control plane and a bench client), api.ts, pool.ts
 * (bounded concurrency), watch.ts (the bench's informers), operator.ts (operator processes),
 * prometheus.ts, proc.ts (memory and CPU from /proc), stats.ts, log.ts.
 */
export * from './log.js';
export * from './cleanup.js';
export * from './env.js';
export * from './api.js';
export * from './pool.js';
export * from './watch.js';
export * from './operator.js';
export * from './prometheus.js';
export * from './proc.js';
export * from './stats.js';
