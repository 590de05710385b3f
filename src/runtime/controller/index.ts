export * from './controller.js';
export * from './metrics.js';
export * from './reconciler.js';
export * from './sources.js';
export * from './builder.js';
export * from './terminal.js';
export * from './declaration.js';
export * from './predicates.js';
