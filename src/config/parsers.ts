/**
 * Value parsers for settings. Each parser turns the raw text of an environment variable or flag
 * into a typed value, and carries `accepts`: the one phrase that both `--help` and the error
 * message use to describe what it takes, so the two can never disagree.
 *
 * Guarantees: a parser either returns a valid value or throws InvalidValue (never returns NaN,
 * an out-of-range number or an unknown choice). Raw text arrives trimmed. The formats (names,
 * image references, paths) are validation.ts's, which the install's construct checks too.
 */
import { isDns1123Label, isDns1123Subdomain, isImageReference, isUrlPath } from './validation.js';

/** Thrown by a parser; `detail` narrows down what is wrong when `accepts` alone would not. */
export class InvalidValue extends Error {
  override readonly name = 'InvalidValue';
  constructor(readonly detail?: string) {
    super(detail ?? 'invalid value');
  }
}

export interface Parser<T> {
  /** What the setting accepts, phrased to follow "expected ...", e.g. "an integer from 1 to 256". */
  readonly accepts: string;
  parse(raw: string): T;
}

const DECIMAL = /^(?:\d+(?:\.\d*)?|\.\d+)$/;
const INTEGER = /^[+-]?\d+$/;

export function integer(min: number, max: number, accepts = `an integer from ${min} to ${max}`): Parser<number> {
  return {
    accepts,
    parse(raw) {
      if (!INTEGER.test(raw)) throw new InvalidValue();
      const n = Number(raw);
      if (!Number.isSafeInteger(n) || n < min || n > max) throw new InvalidValue();
      return n;
    },
  };
}

/** A TCP port; what 0 means differs per setting, so the caller words `accepts`. */
export function port(accepts: string): Parser<number> {
  return integer(0, 65_535, accepts);
}

/**
 * Seconds as a plain decimal ("15", "0.5"), at most `max`. Units ("15s") and exponents are
 * refused: the setting's name already says seconds, and a typo like "1e3" should not silently
 * mean 1000. Every duration has an upper bound, well below what a timer can hold (2^31-1 ms,
 * ~24.8 days, beyond which Node fires it after 1 ms): a value past it is a typo, not a wish.
 */
export function seconds(options: { allowZero: boolean; max: number; accepts: string }): Parser<number> {
  return {
    accepts: options.accepts,
    parse(raw) {
      if (!DECIMAL.test(raw)) throw new InvalidValue();
      const n = Number(raw);
      if (!Number.isFinite(n) || n < 0 || (n === 0 && !options.allowZero)) throw new InvalidValue();
      if (n > options.max) throw new InvalidValue(`${raw} is more than ${options.max}`);
      return n;
    },
  };
}

/** true or false, in any letter case (a Helm template may render True). */
export const boolean: Parser<boolean> = {
  accepts: 'true or false',
  parse(raw) {
    const v = raw.toLowerCase();
    if (v === 'true') return true;
    if (v === 'false') return false;
    throw new InvalidValue();
  },
};

/** One of a fixed set of words, matched in any letter case and returned in lower case. */
export function choice<const T extends string>(values: readonly T[], accepts = `one of ${values.join(', ')}`): Parser<T> {
  return {
    accepts,
    parse(raw) {
      const v = raw.toLowerCase();
      const found = values.find((c) => c === v);
      if (found === undefined) throw new InvalidValue();
      return found;
    },
  };
}

/** Text in a format of validation.ts, returned as is. */
function formatted(accepts: string, valid: (raw: string) => boolean): Parser<string> {
  return {
    accepts,
    parse(raw) {
      if (!valid(raw)) throw new InvalidValue();
      return raw;
    },
  };
}

/** A namespace name: Kubernetes requires a DNS-1123 label. */
export const namespaceName = formatted(
  'a namespace name (a DNS-1123 label: lower-case letters, digits and "-", at most 63 characters)',
  (raw) => isDns1123Label(raw),
);

/** Comma-separated namespace names, blanks around commas ignored, duplicates dropped; empty = []. */
export const namespaceList: Parser<string[]> = {
  accepts: 'a comma-separated list of namespace names (DNS-1123 labels), e.g. team-a,team-b; empty for all namespaces',
  parse(raw) {
    const names = raw
      .split(',')
      .map((s) => s.trim())
      .filter((s) => s !== '');
    const bad = names.find((n) => !isDns1123Label(n));
    if (bad !== undefined) throw new InvalidValue(`"${bad}" is not a namespace name`);
    return [...new Set(names)];
  },
};

export const dnsSubdomain = formatted(
  'a DNS-1123 subdomain (lower-case letters, digits, "-" and ".", at most 253 characters)',
  isDns1123Subdomain,
);

/** Any text, including the empty string (where empty has a meaning, e.g. "in-cluster"). */
export function text(accepts: string): Parser<string> {
  return { accepts, parse: (raw) => raw };
}

export function nonEmptyText(accepts: string): Parser<string> {
  return formatted(accepts, (raw) => raw !== '');
}

/** An absolute URL path without query or fragment, e.g. /metrics. */
export const urlPath = formatted('an absolute URL path such as /metrics (no spaces, "?", "#" or "*", the RBAC wildcard)', isUrlPath);

export const imageReference = formatted(
  'a container image reference such as busybox:1.37 or registry.example.com/tools/busybox@sha256:<digest>',
  isImageReference,
);
