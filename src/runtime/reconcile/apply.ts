/**
 * Server-side apply of an object a controller owns (e.g. a CronJob it keeps), guarded so that
 * it never merges into an object someone else made.
 *
 * Guarantees:
 *  - createByApply: the object's first write is an apply, so our field manager owns every field
 *    it set as Apply from the start; nothing is co-owned by an Update of our own, which would keep
 *    a field we later stop setting from being pruned. It only creates: when the name is taken it
 *    fails with 409 Conflict and leaves that object untouched (an unforced apply would merge into
 *    it wherever the values agree, adding our owner reference: a takeover).
 *  - applyTo: a forced apply to the object with that uid only (409 Conflict when the name now
 *    holds another object, or none): every field we set is taken back from a hand edit, and a
 *    field we no longer set is pruned, unless another manager also set it.
 *  - An object made by an earlier version with a POST (an Update entry of our manager) is
 *    upgraded by applyTo: that entry's fields move into our Apply entry, as client-go's csaupgrade
 *    does, so they can be pruned too. One conditional write, once per such object.
 */
import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';
import type { KubeObject } from '../../kube/object.js';
import type { ResourceType } from '../../kube/resources.js';
import { keyOf, type Client } from '../client/client.js';

/**
 * An apply carrying metadata.resourceVersion is conditional on it when the object exists (409
 * Conflict), and creates the object when it does not. etcd's revision 1 is its empty store and
 * every write moves the revision on, so no stored object has resourceVersion 1: such an apply
 * creates, or fails.
 */
const NO_STORED_OBJECT_HAS = '1';

export interface GuardedApplyOptions {
  /** Whose fields these are: the operator's field manager. */
  fieldManager: string;
  signal: AbortSignal;
}

/** Creates `desired` by server-side apply; 409 Conflict (untouched) when its name is taken. */
export function createByApply<T extends KubeObject>(
  client: Client,
  type: ResourceType<T>,
  desired: T,
  options: GuardedApplyOptions,
): Promise<T> {
  const body = { ...desired, metadata: { ...desired.metadata, resourceVersion: NO_STORED_OBJECT_HAS } };
  return client.apply(type, body, { fieldManager: options.fieldManager, force: false, signal: options.signal });
}

/** Applies `desired` (forced) to the object of that uid, then upgrades our ownership if needed. */
export async function applyTo<T extends KubeObject>(
  client: Client,
  type: ResourceType<T>,
  desired: T,
  options: GuardedApplyOptions & { uid: string },
): Promise<T> {
  const { signal, fieldManager } = options;
  const body = { ...desired, metadata: { ...desired.metadata, uid: options.uid } };
  const applied = await client.apply(type, body, { fieldManager, force: true, signal });
  const managedFields = upgradedManagedFields(applied.metadata?.managedFields as V1ManagedFieldsEntry[] | undefined, fieldManager);
  if (!managedFields) return applied;
  // Conditional: managedFields computed from this version never overwrite a later one's.
  return client.patch(
    type,
    keyOf(applied),
    { metadata: { managedFields } },
    { resourceVersion: applied.metadata?.resourceVersion, signal },
  );
}

const isUpdateBy = (m: V1ManagedFieldsEntry, fieldManager: string): boolean =>
  m.manager === fieldManager && m.operation === 'Update' && !m.subresource && m.fieldsType === 'FieldsV1';

/**
 * The managed fields with fieldManager's Update entries of the same API version folded into its
 * Apply entry (the union of their field sets), or undefined when there is nothing to fold.
 */
export function upgradedManagedFields(
  entries: V1ManagedFieldsEntry[] | undefined,
  fieldManager: string,
): V1ManagedFieldsEntry[] | undefined {
  const ours = entries?.find((m) => m.manager === fieldManager && m.operation === 'Apply' && !m.subresource);
  const updates = entries?.filter((m) => isUpdateBy(m, fieldManager) && m.apiVersion === ours?.apiVersion) ?? [];
  if (!entries || !ours || updates.length === 0) return undefined;
  const fields = updates.reduce((set, u) => unionOfFieldSets(set, u.fieldsV1 as FieldSet), ours.fieldsV1 as FieldSet);
  return entries.filter((m) => !updates.includes(m)).map((m) => (m === ours ? { ...m, fieldsV1: fields } : m));
}

/** FieldsV1: a trie of "f:name", "k:{key}", "v:value" and "." (the node itself) keys. */
type FieldSet = { [key: string]: FieldSet };

function unionOfFieldSets(a: FieldSet = {}, b: FieldSet = {}): FieldSet {
  const union: FieldSet = { ...a };
  for (const [key, child] of Object.entries(b)) union[key] = key in union ? unionOfFieldSets(union[key], child) : child;
  return union;
}
