/**
 * Kubernetes objects as JSON, the one vocabulary of every layer above: the runtime's caches,
 * our custom resources' types, the reconcilers and the tests. Only what the operator reads is
 * named; objects carry more.
 */

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  // On the wire, RFC 3339 strings; client-node's generated types (V1Job...) say Date. The
  // operator only tests deletionTimestamp for presence, so both are accepted.
  creationTimestamp?: string | Date;
  deletionTimestamp?: string | Date;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
  managedFields?: unknown[];
}

/**
 * metav1.Condition, as every Kubernetes API documents it: one aspect of an object's state.
 * lastTransitionTime is RFC 3339 with second precision.
 */
export interface Condition {
  type: string;
  status: 'True' | 'False' | 'Unknown';
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

/** Any Kubernetes object. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
}
