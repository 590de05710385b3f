/**
 * What the operator's caches keep of its primary objects (Echo, ScheduledEcho).
 */
import type { KubeObject } from '../../runtime/index.js';

/**
 * The informer transform of the primary caches: metadata.annotations and managedFields dropped.
 * Annotations are the users' (a tenant may attach up to 256 KiB to every object) and nothing the
 * operator does reads them: the reconcilers read name, namespace, uid, generation,
 * resourceVersion, deletionTimestamp, spec and status; the Event recorder the object's
 * apiVersion, kind, name, namespace, uid and resourceVersion; owner references name and uid; the
 * desired Job and CronJob take none of the owner's annotations; status writes send only
 * resourceVersion and status. Labels stay (small by the API's rules, and a selector may want
 * them). Replaces obj.metadata with a fresh object instead of `delete`-ing keys (see
 * stripForCache), so it may run on a shallow copy of an object someone else holds.
 */
export function primaryForCache<T extends KubeObject>(obj: T): T {
  const meta = obj.metadata;
  if (!meta || (meta.annotations === undefined && meta.managedFields === undefined)) return obj;
  const { annotations: _annotations, managedFields: _managedFields, ...kept } = meta;
  (obj as KubeObject).metadata = kept;
  return obj;
}
