/**
 * Declares a controller as controller-runtime's builder does
 * (`NewControllerManagedBy(mgr).For(&Echo{}).Owns(&Job{}).Complete(r)`), or kube-rs's
 * `Controller::new(api).owns(jobs)`:
 *
 *   controllerFor(ECHOS, { transform: primaryForCache })
 *     .owns(JOBS, { labelSelector: MANAGED_SELECTOR, transform: jobForCache, writes: ['create', 'delete'] })
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

/** An owned kind as the manager reads it (its object type erased: see erased()). */
export interface OwnedType extends OwnedOptions<KubeObject> {
  type: ResourceType;
}

/** The caches a reconciler reads, shared with every controller that watches the same types. */
export interface ControllerCaches<P extends KubeObject> {
  /** The primary kind, reading never older than this process's own writes. */
  primary: ObjectCache<P>;
  /** The cache of an owned kind; throws for a kind the declaration does not own. */
  owned<T extends KubeObject>(type: ResourceType<T>): ObjectCache<T>;
}

/**
 * The manager's side of ControllerCaches: the cache it built for a declared type. Typed by the
 * type asked for, so the declaration's factory gets its caches typed as declared.
 */
export interface DeclaredCaches {
  primary<T extends KubeObject>(type: ResourceType<T>): ObjectCache<T>;
  owned<T extends KubeObject>(type: ResourceType<T>): ObjectCache<T>;
}

/**
 * A controller as declared: the primary kind it reconciles, the kinds it owns, and how its
 * reconciler is made. D is what the application passes every reconciler factory (an API client,
 * an event recorder, settings).
 */
export interface ControllerDeclaration<D> {
  /** Names the controller in logs and metrics (controller-runtime's `controller` label). */
  readonly name: string;
  readonly primary: ResourceType;
  /** The primary cache's transform; undefined: the default (see CacheTransform). */
  readonly primaryTransform?: CacheTransform<KubeObject>;
  readonly owned: readonly OwnedType[];
  readonly reconciler: (caches: DeclaredCaches, deps: D) => Reconciler;
}

/**
 * A transform of T as the manager's caches take it. They hold KubeObjects, and the cache of a
 * type is only ever given objects the API serves for that type, so it only ever sees Ts; the
 * builder's signatures tie T to the type (a ResourceType<T>), which is what makes this sound.
 */
function erased<T extends KubeObject>(transform: CacheTransform<T> | undefined): CacheTransform<KubeObject> | undefined {
  return transform as unknown as CacheTransform<KubeObject> | undefined;
}

export class ControllerBuilder<P extends KubeObject> {
  private readonly ownedTypes: OwnedType[] = [];
  /** controller-runtime's default: the primary kind in lower case. */
  private name: string;

  constructor(
    private readonly primary: ResourceType<P>,
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
  owns<T extends KubeObject>(type: ResourceType<T>, options: OwnedOptions<NoInfer<T>>): this {
    if (this.ownedTypes.some((o) => sameType(o.type, type))) throw new Error(`${type.kind} is owned twice`);
    this.ownedTypes.push({ type, ...options, transform: erased(options.transform) });
    return this;
  }

  complete<D>(reconciler: (caches: ControllerCaches<P>, deps: D) => Reconciler): ControllerDeclaration<D> {
    const primary = this.primary;
    return {
      name: this.name,
      primary,
      primaryTransform: erased(this.primaryOptions.transform),
      owned: [...this.ownedTypes],
      reconciler: (caches, deps) => reconciler({ primary: caches.primary(primary), owned: (type) => caches.owned(type) }, deps),
    };
  }
}

/**
 * Starts a declaration for the primary kind `type` (controller-runtime's For); its objects' type
 * is type's (controllerFor(ECHOS) reconciles Echos).
 */
export function controllerFor<P extends KubeObject>(type: ResourceType<P>, options: PrimaryOptions<NoInfer<P>> = {}): ControllerBuilder<P> {
  return new ControllerBuilder(type, options);
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
export function rulesFor(declarations: readonly ControllerDeclaration<never>[]): PolicyRule[] {
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
