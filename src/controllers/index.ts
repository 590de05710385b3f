/**
 * The operator's controllers: the one list the manager runs and the install's RBAC rules are
 * derived from. A new controller is declared in its own folder
 * (controllerFor(...).owns(...).complete(...)) and added here; the custom resources whose CRDs
 * are installed are listed apart, in src/api/resources.ts.
 */
import type { ControllerDeclaration } from '../runtime/controller/builder.js';
import type { ReconcilerDeps } from './common/ports.js';
import { echoController } from './echo/controller.js';
import { scheduledEchoController } from './scheduledecho/controller.js';

export type { ReconcilerDeps };

export const CONTROLLERS: readonly ControllerDeclaration<ReconcilerDeps>[] = [echoController, scheduledEchoController];
