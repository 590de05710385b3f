export * from './group.js';
export * from './schema.js';
export * from './crd.js';
export * from './echo.js';
export * from './scheduledecho.js';
