/**
 * What a controller declaration is (builder.ts makes one): the kinds a controller reads and
 * writes, as data a manager builds shared caches from and an install derives RBAC from, and how
 * its reconciler is made from the manager's parts and the controller's own context.
 */
import type { ResourceType } from '../../kube/resources.js';
import type { ObjectCache } from '../cache/objectcache.js';
import type { KubeObject } from '../cache/store.js';
import type { Client } from '../client/client.js';
import type { EventRecorder } from '../events.js';
import type { Predicate } from './predicates.js';
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

/** An RBAC rule as Kubernetes writes it (rbac.authorization.k8s.io/v1 PolicyRule). */
export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  verbs: Verb[];
  resourceNames?: string[];
}

export interface PrimaryOptions<T> {
  /** See CacheTransform. */
  transform?: CacheTransform<T>;
}

export interface WatchOptions<T> {
  /** Only objects that match are cached and watched; default all. */
  labelSelector?: string;
  /** See CacheTransform. */
  transform?: CacheTransform<T>;
  /** Which of this type's events wake the controller; default all (see predicates.ts). */
  predicate?: Predicate<T>;
}

export interface OwnedOptions<T> extends WatchOptions<T> {
  /** What the reconciler writes to this type; reading (get, list, watch) is implied. */
  writes: Verb[];
}

/** An owned kind as the manager reads it (its object type erased: see builder.ts). */
export interface OwnedType extends OwnedOptions<KubeObject> {
  type: ResourceType;
}

/** A kind watched, neither reconciled nor owned, as the manager reads it (type erased). */
export interface WatchedType extends WatchOptions<KubeObject> {
  type: ResourceType;
  /** The keys of the primaries an event of this object wakes. */
  toKeys: (obj: KubeObject) => string[];
}

/** The caches a reconciler reads, shared with every controller that watches the same types. */
export interface ControllerCaches<P extends KubeObject> {
  /** The primary kind, reading never older than this process's own writes. */
  primary: ObjectCache<P>;
  /** The cache of an owned kind; throws for a kind the declaration does not own. */
  owned<T extends KubeObject>(type: ResourceType<T>): ObjectCache<T>;
  /** The cache of a watched kind; throws for a kind the declaration does not watch. */
  watched<T extends KubeObject>(type: ResourceType<T>): ObjectCache<T>;
}

/**
 * What a manager gives every reconciler factory (controller-runtime's mgr.GetClient() and
 * GetEventRecorderFor()), beside the controller's own context.
 */
export interface ControllerParts<P extends KubeObject> {
  caches: ControllerCaches<P>;
  client: Client;
  events: EventRecorder;
}

/** The manager's side of ControllerCaches: the cache it built for a declared type, typed as asked. */
export interface DeclaredCaches {
  primary<T extends KubeObject>(type: ResourceType<T>): ObjectCache<T>;
  owned<T extends KubeObject>(type: ResourceType<T>): ObjectCache<T>;
  watched<T extends KubeObject>(type: ResourceType<T>): ObjectCache<T>;
}

/** What a manager hands a declaration to make its reconciler. */
export interface ManagerParts extends Omit<ControllerParts<KubeObject>, 'caches'> {
  caches: DeclaredCaches;
}

/** The kinds a controller reconciles, owns and writes: what caches and RBAC derive from. */
export interface ControllerSpec {
  /** Names the controller in logs and metrics (controller-runtime's `controller` label). */
  readonly name: string;
  readonly primary: ResourceType;
  /** The primary cache's transform; undefined: the default (see CacheTransform). */
  readonly primaryTransform?: CacheTransform<KubeObject>;
  /** Which of the primary's events wake the controller; undefined: all. */
  readonly primaryPredicate?: Predicate<KubeObject>;
  readonly owned: readonly OwnedType[];
  readonly watched: readonly WatchedType[];
  /** What the reconciler needs beyond what its kinds imply (read-only for watched kinds). */
  readonly rules: readonly PolicyRule[];
}

/**
 * A controller as declared. C is its own context (kube-rs's `Controller::run(.., Arc<Ctx>)`):
 * what the application gives this controller's reconciler and no other's (its settings).
 */
export interface ControllerDeclaration<C> extends ControllerSpec {
  readonly reconciler: (parts: ManagerParts, context: C) => Reconciler;
  /** This controller with its context: what a manager runs. */
  readonly withContext: (context: C) => RunnableController;
}

/** A controller ready to run: its reconciler needs only what the manager gives. */
export interface RunnableController extends ControllerSpec {
  readonly reconciler: (parts: ManagerParts) => Reconciler;
}
