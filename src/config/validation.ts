/**
 * The formats Kubernetes and the container runtime require of a setting's value, defined once:
 * the operator's settings parsers (parsers.ts) and the install's construct (infra/props.ts,
 * infra/pod-props.ts) both call these, so a value one accepts the other never refuses.
 *
 * Guarantees: pure predicates with no dependency beyond the language (the operator's bundle does
 * not grow); each accepts exactly what the API server or the kubelet accepts for that field, no
 * more (a value that passes here is not refused later at apply or pull time) and no less.
 *
 * Written by hand: the rules are Kubernetes' own (k8s.io/apimachinery validation) and
 * github.com/distribution/reference's, a few regular expressions; no maintained npm package
 * carries them both without pulling in a client or a schema library.
 */

const DNS1123_LABEL = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*$/;

/**
 * A DNS-1123 label: what a namespace name must be. `max` is lower where a name gets a suffix
 * (the install's `<name>-metrics`) and must stay a label.
 */
export function isDns1123Label(v: string, max = 63): boolean {
  return typeof v === 'string' && v.length <= max && DNS1123_LABEL.test(v);
}

/** A DNS-1123 subdomain: what most object names (Secrets, Leases, PriorityClasses) must be. */
export function isDns1123Subdomain(v: string): boolean {
  return typeof v === 'string' && v.length <= 253 && DNS1123_SUBDOMAIN.test(v);
}

const LABEL_NAME = /^[A-Za-z0-9](?:[-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$/;

/** A label (or annotation) key: `[prefix/]name`, prefix a DNS subdomain, name at most 63 characters. */
export function isLabelKey(k: string): boolean {
  if (typeof k !== 'string') return false;
  const slash = k.indexOf('/');
  if (slash < 0) return LABEL_NAME.test(k);
  return isDns1123Subdomain(k.slice(0, slash)) && LABEL_NAME.test(k.slice(slash + 1));
}

/**
 * The rules above as regular expressions, for schemas (infra/values-schema.ts) that editors and
 * Helm check with a JSON Schema validator: lengths that a pattern cannot say are checked apart.
 */
export const PATTERNS = {
  dns1123Label: DNS1123_LABEL,
  dns1123Subdomain: DNS1123_SUBDOMAIN,
  labelKey: new RegExp(`^(?:${DNS1123_SUBDOMAIN.source.slice(1, -1)}/)?${LABEL_NAME.source.slice(1, -1)}$`),
  labelValue: new RegExp(`^(?:${LABEL_NAME.source.slice(1, -1)})?$`),
} as const;

/** A label value: empty, or at most 63 letters, digits, '-', '_' and '.', alphanumeric at both ends. */
export function isLabelValue(v: string): boolean {
  return typeof v === 'string' && (v === '' || LABEL_NAME.test(v));
}

/** A TCP port; 0 only where the setting gives it a meaning (e.g. "pick a free port"). */
export function isPort(n: number, options: { allowZero?: boolean } = {}): boolean {
  return Number.isInteger(n) && n >= (options.allowZero ? 0 : 1) && n <= 65_535;
}

/**
 * An absolute URL path without query, fragment or '*'. The metrics path becomes the
 * metrics-reader ClusterRole's nonResourceURLs, where '*' is RBAC's wildcard ('/*' would let
 * every scraper GET every non-resource URL of the API server), so it is no character of a path here.
 */
export const URL_PATH = /^\/[A-Za-z0-9\-._~!$&'()+,;=:@%/]*$/;

/** An absolute URL path without query, fragment or '*', e.g. /metrics. */
export function isUrlPath(v: string): boolean {
  return typeof v === 'string' && URL_PATH.test(v);
}

// The grammar of github.com/distribution/reference, which the kubelet's image pull follows:
// [domain[:port]/]path[:tag][@digest]; path components lower case; the domain a host name or an
// IPv6 address in brackets. A digest is one of the algorithms github.com/opencontainers/go-digest
// registers, in lower-case hex of that algorithm's length (anything else fails to pull).
const DOMAIN_COMPONENT = '(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])';
const DOMAIN = `(?:${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*|\\[[0-9a-fA-F:]+\\])(?::[0-9]+)?`;
const PATH_COMPONENT = '[a-z0-9]+(?:(?:[._]|__|[-]+)[a-z0-9]+)*';
const TAG = '[\\w][\\w.-]{0,127}';
const DIGEST = '(?:sha256:[a-f0-9]{64}|sha384:[a-f0-9]{96}|sha512:[a-f0-9]{128})';
export const IMAGE_REFERENCE = new RegExp(`^(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*(?::${TAG})?(?:@${DIGEST})?$`);
/** The parts of a reference apart, as Helm charts' `image.repository`, `image.tag` and `image.digest` hold them. */
export const IMAGE_PARTS = {
  repository: new RegExp(`^(?:${DOMAIN}/)?${PATH_COMPONENT}(?:/${PATH_COMPONENT})*$`),
  tag: new RegExp(`^${TAG}$`),
  digest: new RegExp(`^${DIGEST}$`),
} as const;
/** distribution/reference's NameTotalLengthMax: domain and path, without tag or digest. */
const NAME_MAX = 255;

/** A container image reference: `busybox:1.37`, `[::1]:5000/tools/busybox:1`, `repo:tag@sha512:<digest>`. */
export function isImageReference(v: string): boolean {
  if (typeof v !== 'string' || !IMAGE_REFERENCE.test(v)) return false;
  const withoutDigest = v.split('@', 1)[0]!;
  const tagColon = withoutDigest.lastIndexOf(':');
  const name = tagColon > withoutDigest.lastIndexOf('/') ? withoutDigest.slice(0, tagColon) : withoutDigest;
  return name.length <= NAME_MAX;
}
