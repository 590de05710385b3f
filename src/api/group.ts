/** The API group shared with the Go echoperator, so its resources work unchanged. */
export const GROUP = 'mmontes.io';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
