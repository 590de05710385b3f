export * from './manager.js';
export * from './preflight.js';
export * from './startup.js';
