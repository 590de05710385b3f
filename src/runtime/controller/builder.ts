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
  CacheTransform,
  ControllerDeclaration,
  ControllerParts,
  ManagerParts,
  OwnedOptions,
  OwnedType,
  PrimaryOptions,
  RunnableController,
} from './declaration.js';
import type { Reconciler } from './reconciler.js';

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

  /**
   * Ends the declaration with the reconciler's factory: given the manager's parts (the caches
   * typed as declared) and the controller's context C, which withContext binds.
   */
  complete<C = void>(make: (parts: ControllerParts<P>, context: C) => Reconciler): ControllerDeclaration<C> {
    const primary = this.primary;
    const reconciler = ({ caches, ...parts }: ManagerParts, context: C): Reconciler =>
      make({ ...parts, caches: { primary: caches.primary(primary), owned: (type) => caches.owned(type) } }, context);
    const spec = { name: this.name, primary, primaryTransform: erased(this.primaryOptions.transform), owned: [...this.ownedTypes] };
    return {
      ...spec,
      reconciler,
      withContext: (context: C): RunnableController => ({ ...spec, reconciler: (parts) => reconciler(parts, context) }),
    };
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
