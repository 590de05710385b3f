/**
 * The one Echo a class-specific fault makes and acts on (recreate.ts re-creates it, ttl.ts removes
 * its Job), apart from the workload's Echos so the workload's gates and counted writes stay as a
 * clean run has them. Written as the admin, never through a fault proxy, retried like the
 * workload's own writes (the API server may be busy).
 *
 * Guarantees: createTarget resolves with the Echo the server stored (its uid), an AlreadyExists
 * (the old one not gone yet) is retried until `timeoutMs`; every read has a timeout.
 */
import type { V1Job } from '@kubernetes/client-node';
import { ECHOS, type Echo } from '../../../../src/api/echo.js';
import { API_VERSION } from '../../../../src/api/group.js';
import { isAlreadyExists } from '../../../../src/kube/errors.js';
import { JOBS, resourcePath } from '../../../../src/kube/resources.js';
import type { RestClient } from '../../../../src/kube/rest.js';
import { withRetry } from '../../bench/api.js';
import { sleep } from '../../bench/log.js';
import type { FaultRun } from '../runner/context.js';

const READ_TIMEOUT_MS = 5000;

export async function createTarget(rest: RestClient, namespace: string, name: string, message: string, timeoutMs = 30_000): Promise<Echo> {
  const body: Echo = { apiVersion: API_VERSION, kind: 'Echo', metadata: { name }, spec: { message } };
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await withRetry(() => rest.request<Echo>('POST', resourcePath(ECHOS, namespace), { body }), 12);
    } catch (err) {
      if (!isAlreadyExists(err) || Date.now() > deadline) throw err;
      await sleep(100);
    }
  }
}

export async function getEcho(rest: RestClient, namespace: string, name: string): Promise<Echo> {
  return rest.request<Echo>('GET', resourcePath(ECHOS, namespace, name), { timeoutMs: READ_TIMEOUT_MS });
}

export async function listJobs(rest: RestClient, namespace: string): Promise<V1Job[]> {
  return (await rest.request<{ items?: V1Job[] }>('GET', resourcePath(JOBS, namespace), { timeoutMs: READ_TIMEOUT_MS })).items ?? [];
}

/** A fault that found no target: noted for the report, never thrown (as runner/faults.ts does). */
export function skipped(ctx: Pick<FaultRun, 'notes' | 'log'>, why: string): void {
  ctx.notes.push(`fault skipped: ${why}`);
  ctx.log(`fault skipped: ${why}`);
}
