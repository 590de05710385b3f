/**
 * The operator's controllers. A new controller is declared in its own folder
 * (controllerFor(...).owns(...).complete(...)) and added to both lists below; the custom
 * resources whose CRDs are installed are listed apart, in src/api/resources.ts.
 */
import type { ControllerSpec, RunnableController } from '../runtime/controller/declaration.js';
import { echoController, type EchoContext } from './echo/controller.js';
import { scheduledEchoController, type ScheduledEchoContext } from './scheduledecho/controller.js';

/** What the controllers declare: the install's RBAC rules and admission policy derive from it. */
export const CONTROLLERS: readonly ControllerSpec[] = [echoController, scheduledEchoController];

/** The operator's settings the controllers' contexts are made of. */
export type ControllerSettings = EchoContext & ScheduledEchoContext;

/** The controllers, each with its own context from the settings: what src/main.ts runs. */
export function runnableControllers(settings: ControllerSettings): RunnableController[] {
  return [
    echoController.withContext({ jobImage: settings.jobImage }),
    scheduledEchoController.withContext({ jobImage: settings.jobImage }),
  ];
}
