export * from './manager.js';
export * from './informers.js';
export * from './preflight.js';
