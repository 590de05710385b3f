/**
 * V8 tuned for a long-running controller that idles between bursts, not for peak throughput:
 * --optimize-for-size keeps the young generation small and collects eagerly. Measured by the
 * memory benchmark (a fresh process over 10,000 Echos and 10,000 Jobs): ~110-120 MiB RSS instead
 * of 145-172 MiB, because the initial LIST's allocation burst no longer leaves a 32 MiB young
 * generation and uncollected garbage committed.
 *
 * Set from inside the process so that every way of running it gets it (the bundle on Node or
 * Deno, the single executable, the container); NODE_OPTIONS does not accept this flag. main.ts
 * imports this module first, before anything allocates much.
 */
import { setFlagsFromString } from 'node:v8';

try {
  setFlagsFromString('--optimize-for-size');
} catch {
  // A runtime without V8 flags runs with its defaults.
}
