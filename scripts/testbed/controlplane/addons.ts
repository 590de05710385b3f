/**
 * How add-ons (GitOps today) plug into a local cluster without the cluster importing them: an
 * add-on records the processes it starts in `<cluster folder>/addons/<name>.json`, and
 * stopControlPlane() stops every recorded add-on before the cluster itself, knowing nothing of
 * what they are.
 *
 * Guarantees: a record is rewritten as each process starts, so a start that dies midway is still
 * stopped with its cluster; processes stop in the order recorded (dependents first), and only
 * while their command line names the cluster folder (terminate(), never a reused pid).
 */
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { terminate } from './process.js';

interface AddonRecord {
  /** Stop order: the first is stopped first. */
  pids: number[];
}

const addonsDir = (clusterDir: string): string => join(clusterDir, 'addons');
const recordPath = (clusterDir: string, name: string): string => join(addonsDir(clusterDir), `${name}.json`);

/** Records the add-on's running processes (replacing what was recorded), in the order to stop them. */
export function recordAddon(clusterDir: string, name: string, pids: number[]): void {
  mkdirSync(addonsDir(clusterDir), { recursive: true });
  const record: AddonRecord = { pids: pids.filter((pid) => pid > 0) };
  writeFileSync(recordPath(clusterDir, name), JSON.stringify(record, null, 2) + '\n');
}

/** Stops the processes recorded for the add-on and forgets them (nothing when none is recorded). */
export async function stopAddon(clusterDir: string, name: string): Promise<void> {
  let record: AddonRecord;
  try {
    record = JSON.parse(readFileSync(recordPath(clusterDir, name), 'utf8')) as AddonRecord;
  } catch {
    return;
  }
  for (const pid of record.pids) await terminate(pid, clusterDir);
  rmSync(recordPath(clusterDir, name), { force: true });
}

/** Stops every add-on recorded in the cluster folder. */
export async function stopAddons(clusterDir: string): Promise<void> {
  let files: string[];
  try {
    files = readdirSync(addonsDir(clusterDir));
  } catch {
    return;
  }
  for (const file of files) if (file.endsWith('.json')) await stopAddon(clusterDir, file.slice(0, -'.json'.length));
}
