/** Labels on every object the operator creates, so users and our informers can select them. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'echoperator';
/** The selector our Job and CronJob informers use: only what we made is cached. */
export const MANAGED_SELECTOR = `${MANAGED_BY_LABEL}=${MANAGED_BY}`;

/** Field manager for server-side apply and the name in Events. */
export const FIELD_MANAGER = 'echoperator';

/** Label values are at most 63 characters; owner names can be up to 253, so they are shortened. */
export function labelValue(value: string): string {
  if (value.length <= 63) return value;
  return `${value.slice(0, 52).replace(/[^A-Za-z0-9]+$/, '')}-${value.length.toString(36)}${value.slice(-5)}`.slice(0, 63);
}

export function ownedLabels(ownerLabel: string, ownerName: string, component: string): Record<string, string> {
  return {
    [MANAGED_BY_LABEL]: MANAGED_BY,
    'app.kubernetes.io/name': 'echoperator',
    'app.kubernetes.io/component': component,
    [ownerLabel]: labelValue(ownerName),
  };
}
