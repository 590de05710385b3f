export * from './recorder.js';
export * from './sink.js';
export * from './metrics.js';
