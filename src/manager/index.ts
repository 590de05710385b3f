export * from './manager.js';
export * from './preflight.js';
