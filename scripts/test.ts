/**
 * `npm test`: every test file under test/ with node's test runner, against one control plane for
 * the whole run (reused when `cluster:up` left one running, else started here and stopped after,
 * also on SIGINT/SIGTERM). Arguments narrow the run to matching files: `npm test -- workqueue`.
 */
import { spawn } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { exitWithError } from './controlplane/errors.js';
import { acquireControlPlane } from './controlplane/session.js';
import { ensureBundle } from './runtimes.js';

function testFiles(dir: string): string[] {
  return readdirSync(dir)
    .flatMap((name) => {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) return testFiles(path);
      return name.endsWith('.test.ts') ? [path] : [];
    })
    .sort();
}

async function main(): Promise<void> {
  const filters = process.argv.slice(2);
  const files = testFiles('test').filter((f) => filters.length === 0 || filters.some((p) => f.includes(p)));
  if (files.length === 0) throw new Error(`no test file matches ${filters.join(' ')}`);
  const needsCluster = files.some((f) => !relative('test', f).startsWith('unit'));
  const lease = needsCluster ? await acquireControlPlane() : undefined;
  if (lease) console.error(`tests: using ${lease.describe}`);
  // End-to-end tests run the operator as it ships: the bundle, built from the current sources.
  const bundle = needsCluster && !process.env.ECHOPERATOR_CMD ? await ensureBundle() : undefined;
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', '--test', '--test-reporter=spec', `--test-concurrency=${process.env.TEST_CONCURRENCY ?? 4}`, ...files],
    {
      stdio: 'inherit',
      env: {
        ...process.env,
        ...(lease ? { KUBECONFIG: lease.kubeconfig, ECHOPERATOR_TEST_CLUSTER: '1' } : {}),
        ...(bundle ? { ECHOPERATOR_TEST_BUNDLE: bundle } : {}),
      },
    },
  );
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(s, () => child.kill(s));
  const code = await new Promise<number>((resolve) => child.on('close', (c) => resolve(c ?? 1)));
  await lease?.release();
  process.exit(code);
}

main().catch(exitWithError);
