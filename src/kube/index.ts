export * from './errors.js';
export * from './config.js';
export * from './rest.js';
export * from './resources.js';
