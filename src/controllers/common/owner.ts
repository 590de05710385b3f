/**
 * Metadata of the objects we create for an owner: in the owner's namespace, with our labels and a
 * controller owner reference naming the owner's kind, so the garbage collector removes them with
 * their owner and the owner's controller is woken by their changes. And the reverse: which
 * objects an owner controls.
 */
import type { V1ObjectMeta, V1OwnerReference } from '@kubernetes/client-node';
import {
  apiVersionOf,
  CONTROLLER_OWNER_INDEX,
  controllerOf,
  controllerOwnerKey,
  type KubeObject,
  type ObjectCache,
  type ResourceType,
} from '../../runtime/index.js';

interface Owner {
  metadata: { name?: string; namespace?: string; uid?: string };
}

export function ownedObjectMeta(owner: Owner, ownerType: ResourceType, name: string, labels: Record<string, string>): V1ObjectMeta {
  const ref: V1OwnerReference = {
    apiVersion: apiVersionOf(ownerType),
    kind: ownerType.kind,
    name: owner.metadata.name!,
    uid: owner.metadata.uid!,
    controller: true,
    blockOwnerDeletion: true,
  };
  return { name, namespace: owner.metadata.namespace, labels, ownerReferences: [ref] };
}

/**
 * Whether `obj` is controlled by `owner`: in the owner's namespace, with a controller reference
 * naming the owner's UID, kind and API group (any version). A reference is read in its object's
 * own namespace, so a copied UID in another namespace, or under another kind, is not the owner's.
 */
export function isControlledBy(obj: KubeObject, owner: Owner, ownerType: ResourceType): boolean {
  const ref = controllerOf(obj);
  if (!ref || ref.uid !== owner.metadata.uid || ref.kind !== ownerType.kind) return false;
  const group = ref.apiVersion?.includes('/') ? ref.apiVersion.slice(0, ref.apiVersion.indexOf('/')) : '';
  return group === ownerType.group && obj.metadata?.namespace === owner.metadata.namespace;
}

/**
 * Whether `obj` is controlled by an earlier object of the owner's name and kind: a controller
 * reference naming the owner's name with another UID. A name holds one object at a time, so once
 * the server confirms `owner` holds it, that earlier owner is deleted, and `obj` is left for the
 * garbage collector, which removes it in its own time.
 */
export function isControlledByPredecessor(obj: KubeObject, owner: Owner, ownerType: ResourceType): boolean {
  const ref = controllerOf(obj);
  if (!ref || ref.uid === owner.metadata.uid || ref.name !== owner.metadata.name) return false;
  return isControlledBy(obj, { metadata: { ...owner.metadata, uid: ref.uid } }, ownerType);
}

/** The cached objects `owner` controls (see isControlledBy), found through the controller-owner index. */
export function controlledBy<T extends KubeObject>(cache: Pick<ObjectCache<T>, 'byIndex'>, owner: Owner, ownerType: ResourceType): T[] {
  return cache
    .byIndex(CONTROLLER_OWNER_INDEX, controllerOwnerKey(owner.metadata.namespace, owner.metadata.uid!))
    .filter((obj) => isControlledBy(obj, owner, ownerType));
}

/** The label every owned object carries with its owner's name: `<group>/<singular>`, e.g. mmontes.io/echo. */
export function ownerLabel(ownerType: { group: string; singular: string }): string {
  return `${ownerType.group}/${ownerType.singular}`;
}
