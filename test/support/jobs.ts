/**
 * There is no kubelet in the local control plane, so pods never run: tests finish a Job by
 * writing, through its status subresource, what the job controller writes when the pod succeeded
 * or used up its retries (the server validates these status transitions).
 */
import { eventually, kubectlJson, kubectlOk } from './kube.js';

/**
 * Waits until the real job controller has started the Job (it writes startTime, which a finished
 * Job must keep), then records the outcome.
 */
export async function finishJob(namespace: string, job: string, outcome: 'succeeded' | 'failed'): Promise<void> {
  await eventually(`the job controller to start Job ${job}`, () => kubectlJson(['get', 'job', job], { namespace }).status?.startTime, 60_000);
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const condition = (type: string, reason: string, message: string) => ({ type, status: 'True', reason, message, lastProbeTime: now, lastTransitionTime: now });
  const status =
    outcome === 'succeeded'
      ? {
          active: 0,
          ready: 0,
          succeeded: 1,
          completionTime: now,
          conditions: [
            condition('SuccessCriteriaMet', 'CompletionsReached', 'Reached expected number of succeeded pods'),
            condition('Complete', 'CompletionsReached', 'Reached expected number of succeeded pods'),
          ],
        }
      : {
          active: 0,
          ready: 0,
          failed: 4,
          conditions: [
            condition('FailureTarget', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
            condition('Failed', 'BackoffLimitExceeded', 'Job has reached the specified backoff limit'),
          ],
        };
  kubectlOk(['patch', 'job', job, '--subresource=status', '--type=merge', '-p', JSON.stringify({ status })], { namespace });
}
