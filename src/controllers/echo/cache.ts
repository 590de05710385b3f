/**
 * What the operator's Jobs cache keeps of each Job.
 */
import type { V1Job, V1JobSpec } from '@kubernetes/client-node';
import { type KubeObject, stripForCache } from '../../runtime/index.js';

/**
 * The informer transform of the Jobs cache: stripForCache, and the pod template dropped. The Echo
 * reconciler reads a cached Job's metadata (name, owner, deletion) and status only; the template
 * is most of a Job (about 1.2 of 2.2 KB as JSON) and, measured by `npm run bench -- memory`,
 * ~11 MB of live heap with 10,000 Jobs cached. Whoever needs a Job's template must GET the Job.
 * Like stripForCache, it replaces `spec` with a fresh object instead of `delete`-ing a key.
 */
export function jobForCache<T extends V1Job & KubeObject>(job: T): T {
  stripForCache(job);
  if (job.spec?.template === undefined) return job;
  const { template: _dropped, ...rest } = job.spec;
  job.spec = rest as V1JobSpec;
  return job;
}
