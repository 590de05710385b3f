/**
 * Metadata of the objects we create for an owner: in the owner's namespace, with our labels and a
 * controller owner reference naming the owner's kind, so the garbage collector removes them with
 * their owner and the owner's controller is woken by their changes.
 */
import type { V1ObjectMeta, V1OwnerReference } from '@kubernetes/client-node';
import { apiVersionOf, type ResourceType } from '../../runtime/index.js';

export function ownedObjectMeta(
  owner: { metadata: { name?: string; namespace?: string; uid?: string } },
  ownerType: ResourceType,
  name: string,
  labels: Record<string, string>,
): V1ObjectMeta {
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

/** The label every owned object carries with its owner's name: `<group>/<singular>`, e.g. mmontes.io/echo. */
export function ownerLabel(ownerType: { group: string; singular: string }): string {
  return `${ownerType.group}/${ownerType.singular}`;
}
