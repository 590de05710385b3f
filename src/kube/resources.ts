/**
 * Resource types and their REST paths. The built-in kinds the operator (or a controller built on
 * its runtime) may use are defined here, once; custom resources are defined in src/api (each a
 * ResourceType of its own object type).
 */
import type {
  CoreV1Event,
  V1ConfigMap,
  V1CronJob,
  V1Deployment,
  V1Job,
  V1Lease,
  V1Pod,
  V1Secret,
  V1Service,
} from '@kubernetes/client-node';
import type { KubeObject } from './object.js';

/**
 * A kind as the API serves it, typed by the object it serves (T): a cache, a client or a
 * controller declaration of JOBS deals in V1Jobs, and pairing a type with another kind's objects
 * does not compile.
 */
export interface ResourceType<T extends KubeObject = KubeObject> {
  /** '' for the core group. */
  group: string;
  version: string;
  /** Plural, lower case. */
  resource: string;
  kind: string;
  namespaced: boolean;
  /** Never set: carries T for the compiler (a ResourceType<V1Job> is a ResourceType). */
  readonly __object?: T;
  /**
   * Never set: T's field names. client-node's types have only optional fields, so any two of them
   * (a V1CronJob, a V1ConfigMap) are assignable to each other; their field names tell them apart.
   */
  readonly __fields?: { [K in keyof T]-?: true };
}

export function apiVersionOf(type: ResourceType<KubeObject>): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/** obj with its type's apiVersion and kind (a cache or a list may leave them out). */
export function withTypeMeta<T extends { apiVersion?: string; kind?: string }>(type: ResourceType<KubeObject>, obj: T): T {
  return obj.kind ? obj : { ...obj, apiVersion: apiVersionOf(type), kind: type.kind };
}

/**
 * /api/v1/namespaces/ns/pods/name/status; namespace undefined = across all namespaces (lists).
 */
export function resourcePath(type: ResourceType<KubeObject>, namespace?: string, name?: string, subresource?: string): string {
  const base = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  const ns = type.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const tail = name ? `/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}` : '';
  return `${base}${ns}/${type.resource}${tail}`;
}

/** A namespaced built-in kind. */
function namespaced<T extends KubeObject>(group: string, version: string, resource: string, kind: string): ResourceType<T> {
  return { group, version, resource, kind, namespaced: true };
}

export const JOBS = namespaced<V1Job>('batch', 'v1', 'jobs', 'Job');
export const CRONJOBS = namespaced<V1CronJob>('batch', 'v1', 'cronjobs', 'CronJob');
export const PODS = namespaced<V1Pod>('', 'v1', 'pods', 'Pod');
export const CONFIGMAPS = namespaced<V1ConfigMap>('', 'v1', 'configmaps', 'ConfigMap');
export const SECRETS = namespaced<V1Secret>('', 'v1', 'secrets', 'Secret');
export const SERVICES = namespaced<V1Service>('', 'v1', 'services', 'Service');
export const DEPLOYMENTS = namespaced<V1Deployment>('apps', 'v1', 'deployments', 'Deployment');
export const EVENTS = namespaced<CoreV1Event>('', 'v1', 'events', 'Event');
export const LEASES = namespaced<V1Lease>('coordination.k8s.io', 'v1', 'leases', 'Lease');
