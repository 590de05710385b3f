/**
 * The Echoperator construct's props, one concern a file, exported from here (all but withDefaults:
 * props reach the construct resolved and checked, through resolveEchoperatorProps):
 *  - props-types.ts, props-monitoring-types.ts, pod-props.ts: every prop with its documented default;
 *  - props-defaults.ts: the defaults, and the props with them filled in;
 *  - props-validation.ts: resolveEchoperatorProps, which fills in the defaults and checks every
 *    prop (EchoperatorPropsError names the bad prop);
 *  - props-settings.ts: the operator settings they become.
 */
export * from './pod-props.js';
export * from './props-types.js';
export * from './props-monitoring-types.js';
export { DEFAULTS, ECHOPERATOR_VERSION, IMAGE_REPOSITORY } from './props-defaults.js';
export * from './props-validation.js';
export * from './props-settings.js';
