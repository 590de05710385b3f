/** What every custom resource of ours is made of; each kind is imported from its own file. */
export * from './group.js';
export * from './schema.js';
export * from './crd.js';
