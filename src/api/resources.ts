/**
 * The custom resources this operator defines, in install order: the CRDs generated into crds/
 * (`npm run gen:crds`) and installed by infra/. Declared apart from the controllers: a controller
 * may reconcile a built-in kind, and a custom resource may have no controller of its own.
 */
import type { CustomResourceKind } from './crd.js';
import { ECHOS } from './echo.js';
import { SCHEDULED_ECHOS } from './scheduledecho.js';

export const CUSTOM_RESOURCES: readonly CustomResourceKind[] = [ECHOS, SCHEDULED_ECHOS];
