/**
 * ScheduledEchos and their CronJobs as the control-plane tests handle them: applied with kubectl,
 * read back from the API server.
 */
import type { V1CronJob } from '@kubernetes/client-node';
import type { ScheduledEcho } from '../../src/api/scheduledecho.js';
import { kubectl, kubectlJson } from './kube.js';

/** kubectl apply of a ScheduledEcho with `spec`; the result says whether the server accepted it. */
export function applyScheduledEcho(ns: string, name: string, spec: Record<string, unknown>): ReturnType<typeof kubectl> {
  return kubectl(['apply', '-f', '-'], {
    namespace: ns,
    input: JSON.stringify({ apiVersion: 'mmontes.io/v1alpha1', kind: 'ScheduledEcho', metadata: { name }, spec }),
  });
}

/** The ScheduledEcho as the API server has it. */
export function getScheduledEcho(ns: string, name: string): ScheduledEcho {
  return kubectlJson<ScheduledEcho>(['get', 'scheduledecho', name], { namespace: ns });
}

/** The CronJob as the API server has it (its JSON, read field by field by the tests); undefined when there is none. */
export function getCronJob(ns: string, name: string): V1CronJob | undefined {
  const r = kubectl(['get', 'cronjob', name, '-o', 'json'], { namespace: ns });
  return r.code === 0 ? (JSON.parse(r.stdout) as V1CronJob) : undefined;
}
