/**
 * Which resources the operator reads and writes, and how their REST paths are built.
 */
import { GROUP, VERSION } from '../api/group.js';
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

export const ECHOS: ResourceType = { group: GROUP, version: VERSION, resource: 'echos', kind: 'Echo', namespaced: true };
export const SCHEDULED_ECHOS: ResourceType = {
  group: GROUP,
  version: VERSION,
  resource: 'scheduledechos',
  kind: 'ScheduledEcho',
  namespaced: true,
};
