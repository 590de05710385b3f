/**
 * The Job an Echo should have: a pure function of the Echo and the settings.
 */
import type { V1Job } from '@kubernetes/client-node';
import { ECHOS, type Echo } from '../../api/echo.js';
import { ownedObjectMeta, ownerLabel } from '../common/owner.js';
import { derivedName, shortHash } from '../common/naming.js';
import { ownedLabels } from '../common/labels.js';
import { echoPodTemplate } from '../common/pod.js';

export const ECHO_LABEL = ownerLabel(ECHOS);
/** Retries of a failed pod before the run counts as Failed. */
export const JOB_BACKOFF_LIMIT = 3;

/**
 * `<echo name>-<hash of uid and message>`, at most 63 characters (the Job name becomes a pod label
 * value). The same Echo and message always give the same name, so a repeated reconcile finds the
 * Job instead of creating a second one; a new message gives a new name, i.e. a new run; the UID
 * keeps a re-created Echo of the same name from adopting the old one's Job.
 */
export function jobNameFor(echo: Echo): string {
  return derivedName(echo.metadata.name!, shortHash(echo.metadata.uid ?? '', echo.spec.message), 63);
}

export function desiredJob(echo: Echo, image: string): V1Job {
  const labels = ownedLabels(ECHO_LABEL, echo.metadata.name!, 'echo');
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: ownedObjectMeta(echo, ECHOS, jobNameFor(echo), labels),
    spec: {
      backoffLimit: JOB_BACKOFF_LIMIT,
      template: echoPodTemplate(echo.spec.message, image, labels),
    },
  };
}
