/**
 * The operator's controllers, in ONE list. Each is declared in its own folder
 * (controllerFor(...).owns(...).complete(...), with the context its reconciler takes) and paired
 * here, in one line, with how that context is made from the operator's settings. Everything
 * else reads this list: the install's RBAC rules and admission policy (CONTROLLERS), the custom
 * resources whose CRDs are generated and installed (CUSTOM_RESOURCES) and the controllers
 * src/main.ts runs (runnableControllers).
 */
import { isCustomResourceKind, type CustomResourceKind } from '../api/crd.js';
import type { Settings } from '../config/settings.js';
import { type ControllerDeclaration, type ControllerSpec, type RunnableController, sameType } from '../runtime/index.js';
import { echoController } from './echo/controller.js';
import { scheduledEchoController } from './scheduledecho/controller.js';

/** A declared controller and how it is made ready to run from the settings. */
interface Registered {
  readonly declaration: ControllerSpec;
  readonly runnable: (settings: Settings) => RunnableController;
}

/** A controller whose reconciler takes nothing from the settings. */
function controller(declaration: ControllerDeclaration<void>): Registered;
/** A controller whose context is made from the settings. */
function controller<C>(declaration: ControllerDeclaration<C>, context: (settings: Settings) => C): Registered;
function controller<C>(declaration: ControllerDeclaration<C>, context?: (settings: Settings) => C): Registered {
  return { declaration, runnable: (settings) => declaration.withContext(context ? context(settings) : (undefined as C)) };
}

const REGISTRY: readonly Registered[] = [
  controller(echoController, (s) => ({ jobImage: s.jobImage })),
  controller(scheduledEchoController, (s) => ({ jobImage: s.jobImage })),
];

/** What the controllers declare: the install's RBAC rules and admission policy derive from it. */
export const CONTROLLERS: readonly ControllerSpec[] = REGISTRY.map((r) => r.declaration);

/** The controllers, each with its own context from the settings: what src/main.ts runs. */
export function runnableControllers(settings: Settings): RunnableController[] {
  return REGISTRY.map((r) => r.runnable(settings));
}

/**
 * The custom resources the controllers reconcile, own or watch, each once, in the list's order
 * (the install order): the CRDs generated into crds/ (`npm run gen:crds`) and installed by
 * infra/. A controller may reconcile a built-in kind instead; a custom resource that no
 * controller names would be added here beside these.
 */
export const CUSTOM_RESOURCES: readonly CustomResourceKind[] = CONTROLLERS.flatMap((d) => [
  d.primary,
  ...d.owned.map((o) => o.type),
  ...d.watched.map((w) => w.type),
])
  .filter(isCustomResourceKind)
  .filter((kind, i, kinds) => kinds.findIndex((k) => sameType(k, kind)) === i);
