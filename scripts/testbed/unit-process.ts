/**
 * Runs the unit test files named on the command line in this one process: node's test runner
 * collects the tests each file registers as it is imported, and prints one report.
 *
 * Why not `node --test`, which starts a process per file: in the unit tier that start (the tsx
 * loader and the module graph, loaded again by each of ~80 files) was most of the time: one
 * process runs the tier in about a third of the wall time (docs/benchmarks.md has no section for
 * it; the figures are in the commit). Node does the same with `--test-isolation=none`, but Node 22
 * has it only as `--experimental-test-isolation`, and one mechanism keeps every line's run alike. Unit files share nothing a test leaves behind but the process itself:
 * they must restore what they change (the environment, globals), as `node --test` never required.
 *
 * Usage: node --import tsx --test-reporter=spec scripts/testbed/unit-process.ts FILE...
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

for (const file of process.argv.slice(2)) await import(pathToFileURL(resolve(file)).href);
