/**
 * The names the container image's entrypoint (cachedstart.ts) and the image's build share: where
 * the bundle's code cache lies, and how the build asks for one.
 */

/** The environment variable that asks the entrypoint to write the cache to its path, instead of a run. */
export const CODE_CACHE_OUT_ENV = 'ECHOPERATOR_WRITE_CODE_CACHE';
/** The cache's file name, in the image's compile-cache folder (beside the bundle). */
export const CODE_CACHE_FILE = 'echoperator.js.v8';
