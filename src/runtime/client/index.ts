export * from './client.js';
export * from './kubeclient.js';
