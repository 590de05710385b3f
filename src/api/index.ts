export * from './group.js';
export * from './schema.js';
export * from './crd.js';
export * from './echo.js';
export * from './scheduledecho.js';
import { buildCrd } from './crd.js';
import { echoKind } from './echo.js';
import { scheduledEchoKind } from './scheduledecho.js';

export const allKinds = [echoKind, scheduledEchoKind];

/** The CRDs the operator needs, in the order they are installed. */
export function allCrds() {
  return allKinds.map(buildCrd);
}
