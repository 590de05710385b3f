/**
 * What every key's schema in the values file is made of: the value formats the construct checks
 * (ports, counts, DNS names, labels, image references, quantities), said once so each key's
 * schema refuses what the synth refuses; opt(), for which an empty key means the default; and
 * documented(), which gives a key its description and, from SYNTH, the synth's own default.
 */
import { z } from 'zod';
import { IMAGE_REFERENCE, PATTERNS, URL_PATH } from '../src/config/validation.js';
import { LEASE_MAX_SECONDS } from '../src/runtime/leaderelection/config.js';
import { QUANTITY, resolveEchoperatorProps } from './props.js';

/** An optional values key: absent or empty (null in YAML) both mean the default. */
export function opt<T extends z.ZodType>(schema: T) {
  return schema.nullish().transform((v) => (v === null ? undefined : v) as Exclude<z.output<T>, null>);
}

export const int = () => z.int();
export const stringMap = () => z.record(z.string(), z.string());
// The formats the construct checks (infra/props-validation.ts), said here too so that
// values.schema.json refuses what the synth refuses: an editor or `helm lint` flags the value
// before any synth.
export const positive = () => z.int().min(1, { error: 'must be an integer of at least 1' });
export const port = () => z.int().min(1, { error: 'must be a port, 1-65535' }).max(65_535, { error: 'must be a port, 1-65535' });
export const dnsLabel = (max = 63) =>
  z
    .string()
    .max(max, { error: `must be at most ${max} characters` })
    .regex(PATTERNS.dns1123Label, { error: "must be a DNS label: lower-case letters, digits and '-'" });
/** A DNS label, or "" for "not set" (Helm charts' nameOverride: "" convention). */
export const dnsLabelOrEmpty = (max: number) =>
  z
    .string()
    .max(max, { error: `must be at most ${max} characters` })
    .regex(new RegExp(`^$|${PATTERNS.dns1123Label.source}`), { error: "must be empty or a DNS label: lower-case letters, digits and '-'" });
export const dnsSubdomain = () =>
  z
    .string()
    .max(253, { error: 'must be at most 253 characters' })
    .regex(PATTERNS.dns1123Subdomain, { error: "must be a DNS subdomain: lower-case letters, digits, '-' and '.'" });
export const urlPath = () =>
  z.string().regex(URL_PATH, { error: "must be an absolute URL path such as '/metrics', without '*' (the RBAC wildcard)" });
export const imageReference = () => z.string().regex(IMAGE_REFERENCE, { error: "must be an image reference such as 'repo/name:tag'" });
export const labels = () =>
  z.record(
    z.string().regex(PATTERNS.labelKey, { error: 'must be a label key' }),
    z.string().max(63).regex(PATTERNS.labelValue, { error: 'must be a label value' }),
  );
export const leaseSeconds = () => positive().max(LEASE_MAX_SECONDS, { error: `must be at most ${LEASE_MAX_SECONDS} (an hour)` });

/**
 * What the construct synthesizes with no props: the source of every `default` in the schema, so
 * that its defaults are the synth's by construction and a default changed in
 * infra/props-defaults.ts changes values.schema.json (and the README's table) at the next
 * `npm run gen:values-schema`.
 */
export const SYNTH = resolveEchoperatorProps();

/**
 * `schema` with its description and its default. The default is given when the synth's is a
 * constant; a key whose default depends on another value or means "none" (watchNamespaces,
 * monitoring.namespace...) has none, and its description says what unset means ("Unset: ...").
 */
export function documented<T extends z.ZodType>(schema: T, description: string, dflt?: unknown): T {
  return schema.meta(dflt === undefined ? { description } : { description, default: dflt });
}

/** A Kubernetes quantity the construct can compare ('100m', '1', '64Mi'): checked here, so an editor flags it too. */
export const quantity = () => z.string().regex(QUANTITY, { error: "must be a Kubernetes quantity such as '100m', '1', '64Mi' or '1Gi'" });
