/**
 * Resource types and their REST paths. The built-in kinds the operator uses are here; our own
 * custom resources are defined once in src/api (each a ResourceType).
 */
export interface ResourceType {
  /** '' for the core group. */
  group: string;
  version: string;
  /** Plural, lower case. */
  resource: string;
  kind: string;
  namespaced: boolean;
}

export function apiVersionOf(type: ResourceType): string {
  return type.group ? `${type.group}/${type.version}` : type.version;
}

/** obj with its type's apiVersion and kind (a cache or a list may leave them out). */
export function withTypeMeta<T extends { apiVersion?: string; kind?: string }>(type: ResourceType, obj: T): T {
  return obj.kind ? obj : { ...obj, apiVersion: apiVersionOf(type), kind: type.kind };
}

/**
 * /api/v1/namespaces/ns/pods/name/status; namespace undefined = across all namespaces (lists).
 */
export function resourcePath(type: ResourceType, namespace?: string, name?: string, subresource?: string): string {
  const base = type.group ? `/apis/${type.group}/${type.version}` : `/api/${type.version}`;
  const ns = type.namespaced && namespace ? `/namespaces/${encodeURIComponent(namespace)}` : '';
  const tail = name ? `/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}` : '';
  return `${base}${ns}/${type.resource}${tail}`;
}

export const JOBS: ResourceType = { group: 'batch', version: 'v1', resource: 'jobs', kind: 'Job', namespaced: true };
export const CRONJOBS: ResourceType = { group: 'batch', version: 'v1', resource: 'cronjobs', kind: 'CronJob', namespaced: true };
export const EVENTS: ResourceType = { group: '', version: 'v1', resource: 'events', kind: 'Event', namespaced: true };
export const LEASES: ResourceType = { group: 'coordination.k8s.io', version: 'v1', resource: 'leases', kind: 'Lease', namespaced: true };
