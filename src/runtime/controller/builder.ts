/**
 * Declares a controller as controller-runtime's builder does
 * (`NewControllerManagedBy(mgr).For(&Echo{}).Owns(&Job{}).Complete(r)`), or kube-rs's
 * `Controller::new(api).owns(jobs)`:
 *
 *   controllerFor<Echo>(ECHOS, { transform: primaryForCache })
 *     .owns<V1Job>(JOBS, { labelSelector: MANAGED_SELECTOR, transform: jobForCache, writes: ['create', 'delete'] })
 *     .complete((caches, deps) => new EchoReconciler({ echos: caches.primary, jobs: caches.owned(JOBS), ... }));
 *
 * A declaration is data. A manager builds one informer per resource type (and selector) from
 * all declarations and shares it, wakes each controller with its primary's changes and with its
 * owned objects' controller owner, and hands the reconciler factory the caches; the install
 * derives the operator's RBAC rules from the same declarations (`rulesFor`). The owner that an
 * owned object's controller reference must name is the primary's group and kind.
 */
import { apiVersionOf, type ResourceType } from '../../kube/resources.js';
import type { ObjectCache } from '../cache/objectcache.js';
import type { KubeObject } from '../cache/store.js';
import type { Reconciler } from './reconciler.js';

export type Verb = 'get' | 'list' | 'watch' | 'create' | 'update' | 'patch' | 'delete';

/**
 * A cache transform (controller-runtime's cache.Options Transform, kube-rs's reflector map):
 * drops what the reconciler never reads, before an object is cached (listed, watched, or
 * returned by a write of ours: read-your-writes stores transformed copies too). It may replace
 * the object's top-level fields (obj.metadata = {...}) but must not change the objects nested in
 * them: a written object is transformed as a shallow copy, whose nested objects the writer still
 * holds. Default: stripForCache (managedFields and the last-applied annotation dropped).
 */
export type CacheTransform<T> = (obj: T) => T;

export interface PrimaryOptions<T> {
  /** See CacheTransform. */
  transform?: CacheTransform<T>;
}

export interface OwnedOptions<T> {
  /** Only objects that match are cached and watched (what this controller labels); default all. */
  labelSelector?: string;
  /** See CacheTransform. */
  transform?: CacheTransform<T>;
  /** What the reconciler writes to this type; reading (get, list, watch) is implied. */
  writes: Verb[];
}

export interface OwnedType extends OwnedOptions<KubeObject> {
  type: ResourceType;
}

/** The caches a reconciler reads, shared with every controller that watches the same types. */
export interface ControllerCaches<P> {
  /** The primary kind, reading never older than this process's own writes. */
  primary: ObjectCache<P>;
  owned<T>(type: ResourceType): ObjectCache<T>;
}

/**
 * A controller as declared: the primary kind it reconciles, the kinds it owns, and how its
 * reconciler is made. D is what the application passes every reconciler factory (an API client,
 * an event recorder, settings).
 */
export interface ControllerDeclaration<D, K extends ResourceType = ResourceType> {
  /** Names the controller in logs and metrics (controller-runtime's `controller` label). */
  readonly name: string;
  readonly primary: K;
  /** The primary cache's transform; undefined: the default (see CacheTransform). */
  readonly primaryTransform?: CacheTransform<KubeObject>;
  readonly owned: readonly OwnedType[];
  reconciler(caches: ControllerCaches<KubeObject>, deps: D): Reconciler;
}

export class ControllerBuilder<P extends KubeObject, K extends ResourceType> {
  private readonly ownedTypes: OwnedType[] = [];
  /** controller-runtime's default: the primary kind in lower case. */
  private name: string;

  constructor(
    private readonly primary: K,
    private readonly primaryOptions: PrimaryOptions<P> = {},
  ) {
    this.name = primary.kind.toLowerCase();
  }

  /** Names the controller in logs and metrics; default the primary kind in lower case. */
  named(name: string): this {
    this.name = name;
    return this;
  }

  /** Objects this controller creates with itself as controller owner; their changes wake it. */
  owns<T extends KubeObject>(type: ResourceType, options: OwnedOptions<T>): this {
    if (this.ownedTypes.some((o) => sameType(o.type, type))) throw new Error(`${type.kind} is owned twice`);
    this.ownedTypes.push({ type, ...(options as unknown as OwnedOptions<KubeObject>) });
    return this;
  }

  complete<D>(reconciler: (caches: ControllerCaches<P>, deps: D) => Reconciler): ControllerDeclaration<D, K> {
    return {
      name: this.name,
      primary: this.primary,
      primaryTransform: this.primaryOptions.transform as CacheTransform<KubeObject> | undefined,
      owned: [...this.ownedTypes],
      reconciler: reconciler,
    };
  }
}

/** Starts a declaration for the primary kind `type` (controller-runtime's For). */
export function controllerFor<P extends KubeObject, K extends ResourceType = ResourceType>(
  type: K,
  options: PrimaryOptions<P> = {},
): ControllerBuilder<P, K> {
  return new ControllerBuilder<P, K>(type, options);
}

export function sameType(a: ResourceType, b: ResourceType): boolean {
  return a.group === b.group && a.version === b.version && a.resource === b.resource;
}

/** The owner an owned object's controller reference names: the primary's group and kind. */
export function ownerOf(declaration: { primary: ResourceType }): { group: string; kind: string; apiVersion: string } {
  return { group: declaration.primary.group, kind: declaration.primary.kind, apiVersion: apiVersionOf(declaration.primary) };
}

/** An RBAC rule as Kubernetes writes it (rbac.authorization.k8s.io/v1 PolicyRule). */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: Verb[];
  resourceNames?: string[];
}

const READ: Verb[] = ['get', 'list', 'watch'];

/**
 * The rules a set of controllers needs: to read its primary kinds, patch their status (status is
 * only ever patched, merge or apply, never replaced: no `update` on <primary>/status), and set
 * owner references that block owner deletion (update on <primary>/finalizers, which the
 * OwnerReferencesPermissionEnforcement admission plugin checks whatever the verb of the write that
 * sets them); to read and write, as declared, the kinds they own. Resources of one group with the
 * same verbs share a rule.
 */
export function rulesFor(declarations: readonly ControllerDeclaration<unknown>[]): PolicyRule[] {
  const verbsByResource = new Map<string, { group: string; resource: string; verbs: Set<Verb> }>();
  const grant = (group: string, resource: string, verbs: Verb[]): void => {
    const key = `${group}/${resource}`;
    const entry = verbsByResource.get(key) ?? { group, resource, verbs: new Set<Verb>() };
    for (const v of verbs) entry.verbs.add(v);
    verbsByResource.set(key, entry);
  };
  for (const d of declarations) {
    grant(d.primary.group, d.primary.resource, READ);
    grant(d.primary.group, `${d.primary.resource}/status`, ['patch']);
    grant(d.primary.group, `${d.primary.resource}/finalizers`, ['update']);
    for (const o of d.owned) grant(o.type.group, o.type.resource, [...READ, ...o.writes]);
  }
  const order: Verb[] = ['get', 'list', 'watch', 'create', 'patch', 'update', 'delete'];
  const rules = new Map<string, PolicyRule>();
  for (const { group, resource, verbs } of verbsByResource.values()) {
    const sorted = order.filter((v) => verbs.has(v));
    const key = `${group}|${sorted.join(',')}`;
    const rule = rules.get(key) ?? { apiGroups: [group], resources: [], verbs: sorted };
    rule.resources.push(resource);
    rules.set(key, rule);
  }
  return [...rules.values()];
}
