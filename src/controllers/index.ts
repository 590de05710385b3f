/**
 * The operator's controllers: the one list the manager runs, the CRDs are generated from, and the
 * install's RBAC rules are derived from. A new controller is declared in its own folder
 * (controllerFor(...).owns(...).complete(...)) and added here.
 */
import type { CustomResourceKind } from '../api/crd.js';
import type { ControllerDeclaration } from '../runtime/controller/builder.js';
import type { ReconcilerDeps } from './common/ports.js';
import { echoController } from './echo/controller.js';
import { scheduledEchoController } from './scheduledecho/controller.js';

export type { ReconcilerDeps };

export const CONTROLLERS: readonly ControllerDeclaration<ReconcilerDeps, CustomResourceKind>[] = [echoController, scheduledEchoController];

/** The custom resources the controllers reconcile, in install order: their CRDs must be installed. */
export const CUSTOM_RESOURCES: readonly CustomResourceKind[] = CONTROLLERS.map((c) => c.primary);
