/**
 * V8 tuned for a long-running controller that idles between bursts, not for peak throughput:
 * --optimize-for-size keeps the young generation small and collects eagerly. Measured by the
 * memory benchmark (a fresh process over 10,000 Echos and 10,000 Jobs): ~110-120 MiB RSS instead
 * of 145-172 MiB, because the initial LIST's allocation burst no longer leaves a 32 MiB young
 * generation and uncollected garbage committed.
 *
 * Set from inside the process so that every way of running it gets it (the bundle on Node or
 * Deno, the single executable, the container); NODE_OPTIONS does not accept this flag.
 *
 * When: main() calls it once every module is loaded, before the first request. Not earlier: a
 * V8 flag changes V8's flag hash, and Node's built-in modules (https, tls, crypto, ...) come with
 * a code cache that V8 accepts only under the hash it was made with; a builtin loaded after the
 * change is compiled from source. Set as the first import, it made the image's start-up compile
 * https, tls and crypto (about 30 ms of CPU of a 150 ms start, profiled).
 */
import { setFlagsFromString } from 'node:v8';

export function tuneV8ForSize(): void {
  try {
    setFlagsFromString('--optimize-for-size');
  } catch {
    // A runtime without V8 flags runs with its defaults.
  }
}
