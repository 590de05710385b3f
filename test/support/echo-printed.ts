/**
 * What an Echo printed on a cluster with a node, read as a user would: wait until the Echo
 * Succeeded, then `kubectl logs` its Job (named in the Echo's status).
 */
import type { Echo } from '../../src/api/echo.js';
import type { Kubectl } from './faults.js';
import { eventually } from './kube.js';

/** The log of Echo `ns/name`'s Job once the Echo Succeeded (90 s at most). */
export async function printedBy(k: Kubectl, ns: string, name: string): Promise<string> {
  const e = await eventually(
    `Echo ${ns}/${name} Succeeded`,
    () => {
      const got = k.json<Echo>(['get', 'echo', name], { namespace: ns });
      return got.status?.phase === 'Succeeded' && got;
    },
    90_000,
  );
  return k.ok(['logs', `job/${e.status!.jobName!}`], { namespace: ns });
}
