export * from './cache.js';
export * from './client.js';
export * from './clock.js';
export * from './events.js';
export * from './mergepatch.js';
export * from './parts.js';
