/**
 * Declares a controller as controller-runtime's builder does
 * (`NewControllerManagedBy(mgr).For(&Widget{}).Owns(&Job{}).Complete(r)`), or kube-rs's
 * `Controller::new(api).owns(jobs)`:
 *
 *   controllerFor(WIDGETS, { transform: dropAnnotations })
 *     .owns(JOBS, { labelSelector: 'app=widgets', writes: ['create', 'delete'] })
 *     .complete(({ caches, client, events }, context: WidgetContext) =>
 *       new WidgetReconciler({ widgets: caches.primary, jobs: caches.owned(JOBS), client, events, image: context.image }));
 *
 * A declaration is data (declaration.ts). A manager builds one informer per resource type (and
 * selector) from all declarations and shares it, wakes each controller with its primary's
 * changes and with its owned objects' controller owner, and hands the reconciler factory the
 * caches, a client and an event recorder, with the context the application bound to the
 * declaration (withContext); an install derives RBAC rules from the same declarations. The owner
 * that an owned object's controller reference must name is the primary's group and kind.
 */
import { apiVersionOf, type ResourceType } from '../../kube/resources.js';
import type { KubeObject } from '../cache/store.js';
import type {
  ControllerDeclaration,
  ControllerParts,
  ControllerSpec,
  ManagerParts,
  OwnedOptions,
  OwnedType,
  PolicyRule,
  PrimaryOptions,
  RunnableController,
  WatchedType,
  WatchOptions,
} from './declaration.js';
import type { Predicate } from './predicates.js';
import type { Reconciler } from './reconciler.js';

/**
 * A function of T as the manager's caches call it. They hold KubeObjects, and the cache of a type
 * is only ever given objects the API serves for that type, so the function only ever sees Ts;
 * the builder's signatures tie T to the type (a ResourceType<T>), which is what makes this sound.
 */
function erased<T extends KubeObject, R>(f: ((obj: T) => R) | undefined): ((obj: KubeObject) => R) | undefined {
  return f as unknown as ((obj: KubeObject) => R) | undefined;
}

/**
 * A predicate of T as the manager's caches call it: sound as erased() is (the compiler lets it
 * through as it lets any method's parameters vary).
 */
function erasedPredicate<T extends KubeObject>(p: Predicate<T> | undefined): Predicate<KubeObject> | undefined {
  return p;
}

export class ControllerBuilder<P extends KubeObject> {
  private readonly ownedTypes: OwnedType[] = [];
  private readonly watchedTypes: WatchedType[] = [];
  private readonly rules: PolicyRule[] = [];
  private primaryPredicate: Predicate<P> | undefined;
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

  /**
   * Which of the primary's events wake the controller (controller-runtime's
   * For(obj, WithPredicates(p))); default all. E.g. generationChangedOrDeleted.
   */
  withEventFilter(predicate: Predicate<P>): this {
    this.primaryPredicate = predicate;
    return this;
  }

  /** Objects this controller creates with itself as controller owner; their changes wake it. */
  owns<T extends KubeObject>(type: ResourceType<T>, options: OwnedOptions<NoInfer<T>>): this {
    this.refuseTwice(type);
    this.ownedTypes.push({ type, ...options, transform: erased(options.transform), predicate: erasedPredicate(options.predicate) });
    return this;
  }

  /**
   * Objects of a kind this controller neither reconciles nor owns (controller-runtime's
   * Watches(obj, EnqueueRequestsFromMapFunc(f))): each of their events wakes the primaries whose
   * keys (namespace/name) `toKeys` returns. Read-only: the install grants get, list and watch.
   */
  watches<T extends KubeObject>(type: ResourceType<T>, toKeys: (obj: T) => string[], options: WatchOptions<NoInfer<T>> = {}): this {
    this.refuseTwice(type);
    this.watchedTypes.push({
      type,
      ...options,
      toKeys: erased(toKeys)!,
      transform: erased(options.transform),
      predicate: erasedPredicate(options.predicate),
    });
    return this;
  }

  /** RBAC the reconciler needs beyond what its kinds imply (kubebuilder's +kubebuilder:rbac markers). */
  withRules(...rules: PolicyRule[]): this {
    this.rules.push(...rules);
    return this;
  }

  /**
   * Ends the declaration with the reconciler's factory: given the manager's parts (the caches
   * typed as declared) and the controller's context C, which withContext binds.
   */
  complete<C = void>(make: (parts: ControllerParts<P>, context: C) => Reconciler): ControllerDeclaration<C> {
    const primary = this.primary;
    const reconciler = ({ caches, ...parts }: ManagerParts, context: C): Reconciler =>
      make(
        {
          ...parts,
          caches: { primary: caches.primary(primary), owned: (type) => caches.owned(type), watched: (type) => caches.watched(type) },
        },
        context,
      );
    const spec: ControllerSpec = {
      name: this.name,
      primary,
      primaryTransform: erased(this.primaryOptions.transform),
      primaryPredicate: erasedPredicate(this.primaryPredicate),
      owned: [...this.ownedTypes],
      watched: [...this.watchedTypes],
      rules: [...this.rules],
    };
    return {
      ...spec,
      reconciler,
      withContext: (context: C): RunnableController => ({ ...spec, reconciler: (parts) => reconciler(parts, context) }),
    };
  }

  private refuseTwice(type: ResourceType): void {
    const declared = [this.primary, ...this.ownedTypes.map((o) => o.type), ...this.watchedTypes.map((w) => w.type)];
    if (declared.some((d) => sameType(d, type))) throw new Error(`${type.kind} is declared twice`);
  }
}

/**
 * Starts a declaration for the primary kind `type` (controller-runtime's For); its objects' type
 * is type's (controllerFor(JOBS) reconciles V1Jobs).
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
