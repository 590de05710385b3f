/**
 * What the operator may do in a namespace it watches, resource by resource, as its controllers
 * declare it: read each primary kind, patch its status and update its finalizers; read each owned
 * kind and write it as declared; read each watched kind; the rules declared besides; and record
 * Events. Stated from the declarations, not through infra/rbac.ts, so that the tests hold the
 * install (synthesized, or as the real authorizer reports it) to them.
 */
import { CONTROLLERS } from '../../src/controllers/index.js';
import { EVENTS, type ResourceType } from '../../src/kube/resources.js';

/** One resource (of a group, by some names or any) and every verb granted on it, sorted. */
export interface Grant {
  group: string;
  resource: string;
  resourceNames: string[];
  verbs: string[];
}

interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  verbs: string[];
}

const READ = ['get', 'list', 'watch'];

/** The grants of `rules`, one per group, resource and names, sorted. */
export function grantsOf(rules: readonly Rule[]): Grant[] {
  const grants = new Map<string, Grant>();
  for (const r of rules) {
    for (const group of r.apiGroups ?? []) {
      for (const resource of r.resources ?? []) {
        const resourceNames = [...(r.resourceNames ?? [])].sort();
        const key = `${group}|${resource}|${resourceNames.join(',')}`;
        const verbs = new Set([...(grants.get(key)?.verbs ?? []), ...r.verbs]);
        grants.set(key, { group, resource, resourceNames, verbs: [...verbs].sort() });
      }
    }
  }
  return [...grants.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, g]) => g);
}

/** What the controllers' declarations entitle the operator to, as grantsOf words it. */
export function declaredGrants(): Grant[] {
  const on = (type: ResourceType, verbs: string[], subresource = ''): Rule => ({
    apiGroups: [type.group],
    resources: [`${type.resource}${subresource}`],
    verbs,
  });
  return grantsOf([
    ...CONTROLLERS.flatMap((d) => [
      on(d.primary, READ),
      on(d.primary, ['patch'], '/status'),
      on(d.primary, ['update'], '/finalizers'),
      ...d.owned.map((o) => on(o.type, [...READ, ...o.writes])),
      ...d.watched.map((w) => on(w.type, READ)),
      ...d.rules,
    ]),
    on(EVENTS, ['create', 'patch']),
  ]);
}
