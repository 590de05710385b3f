/**
 * The CronJob a ScheduledEcho should have: a pure function of it and the settings.
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

export function desiredCronJob(se: ScheduledEcho, image: string): V1CronJob {
  const labels = ownedLabels(SCHEDULED_ECHO_LABEL, se.metadata.name!, 'scheduledecho');
  return {
    apiVersion: 'batch/v1',
    kind: 'CronJob',
    metadata: ownedObjectMeta(se, SCHEDULED_ECHOS, cronJobNameFor(se), labels),
    spec: {
      schedule: se.spec.schedule,
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
