export * from './recorder.js';
export * from './sink.js';
