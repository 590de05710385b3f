/**
 * A command given as a JSON array in an environment variable, the way the tests and benchmarks
 * take another program to run (ECHOPERATOR_CMD: the operator as a bundle, on Deno, or the single
 * executable; BASELINE_CMD: an earlier build for `npm run bench -- peers`).
 */

/** The argv in `name`; undefined when unset or empty. A value that is not a non-empty array of strings is an error naming it. */
export function commandFromEnv(name: string): string[] | undefined {
  const json = process.env[name];
  if (!json) return undefined;
  let argv: unknown;
  try {
    argv = JSON.parse(json);
  } catch {
    argv = undefined;
  }
  if (!Array.isArray(argv) || argv.length === 0 || !argv.every((a) => typeof a === 'string')) {
    throw new Error(`${name} must be a JSON array of strings, e.g. '["node","dist/bundle/echoperator.js"]'; got ${json}`);
  }
  return argv;
}
