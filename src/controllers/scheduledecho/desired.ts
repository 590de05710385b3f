/**
 * The CronJob a ScheduledEcho should have: a pure function of it and the settings.
 *
 * What the operator owns: every field this function sets, by server-side apply (the reconciler
 * restores any of them edited by hand, and prunes one a later version stops setting). It sets
 * every CronJob field that decides whether and when the message is printed, even those whose
 * value is the server's default, since only a field it sets is one it can restore: the schedule,
 * its time zone (the ScheduledEcho's, Etc/UTC by default), the starting deadline, suspend, the
 * concurrency policy, the history limits, and the Job template it builds. Fields it does not set
 * (a Job's activeDeadlineSeconds, a pod's tolerations or nodeSelector...) are left to the
 * cluster's users and admission policies.
 */
import type { V1CronJob } from '@kubernetes/client-node';
import { SCHEDULED_ECHOS, type ScheduledEcho } from '../../api/scheduledecho.js';
import { ownedLabels } from '../common/labels.js';
import { nameWithin } from '../common/naming.js';
import { echoPodTemplate } from '../common/pod.js';
import { JOB_BACKOFF_LIMIT } from '../echo/desired.js';
import { ownedObjectMeta, ownerLabel } from '../common/owner.js';

export const SCHEDULED_ECHO_LABEL = ownerLabel(SCHEDULED_ECHOS);

/**
 * The ScheduledEcho's own name (as the Go echoperator does) when it fits in 52 characters, the
 * longest CronJob name (its Jobs append 11); longer names are shortened with a hash.
 */
export function cronJobNameFor(se: ScheduledEcho): string {
  return nameWithin(se.metadata.name!, 52);
}

/**
 * The time zone of a ScheduledEcho without spec.timeZone (the Go echoperator's, and every one made
 * before it existed): UTC, wherever kube-controller-manager runs. Set explicitly, so such a
 * ScheduledEcho's CronJob stays byte-identical and an upgrade writes nothing.
 */
export const CRONJOB_TIME_ZONE = 'Etc/UTC';
/**
 * A run that could not start within 5 minutes of its time (the cronjob controller down or
 * behind, the previous run still going under Forbid) is skipped, not started late; it also keeps
 * the controller from counting missed times back to the last run after a long outage.
 */
export const STARTING_DEADLINE_SECONDS = 300;

export function desiredCronJob(se: ScheduledEcho, image: string): V1CronJob {
  const labels = ownedLabels(SCHEDULED_ECHO_LABEL, se.metadata.name!, 'scheduledecho');
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: ownedObjectMeta(se, SCHEDULED_ECHOS, cronJobNameFor(se), labels),
    spec: {
      schedule: se.spec.schedule,
      timeZone: se.spec.timeZone ?? CRONJOB_TIME_ZONE,
      startingDeadlineSeconds: STARTING_DEADLINE_SECONDS,
      suspend: false,
      concurrencyPolicy: 'Forbid',
      successfulJobsHistoryLimit: 3,
      failedJobsHistoryLimit: 1,
      jobTemplate: {
        metadata: { labels },
        spec: { backoffLimit: JOB_BACKOFF_LIMIT, template: echoPodTemplate(se.spec.message, image, labels) },
      },
    },
  };
}
