/**
 * infra/values.yaml -> EchoperatorProps, with the one environment override: ECHOPERATOR_HA.
 * The file is checked against VALUES_SCHEMA (infra/values-schema.ts, the one schema behind
 * infra/values.schema.json too): unknown keys and wrongly shaped values are errors naming the key
 * (`tolerations[0].effect`), so a typo cannot silently fall back to a default.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { z } from 'zod';
import type { EchoperatorProps } from './echoperator.js';
import { applySetArgument, mergeValues } from './set-values.js';
import { VALUES_SCHEMA, type Values } from './values-schema.js';

export const VALUES_FILE = new URL('./values.yaml', import.meta.url);

/** Overrides values.yaml's ha.enabled for one synth: 'true' or 'false' (empty = unset). */
export const HA_ENV = 'ECHOPERATOR_HA';

export class ValuesError extends Error {
  override readonly name = 'ValuesError';
}

// The schema's type and the construct's props must stay one shape: every values key is a prop of
// the same type, and every prop but `labels` (a construct-only prop) is a values key.
const valuesAreProps = (v: Values): EchoperatorProps => v;
type MissingKeys = Exclude<keyof EchoperatorProps, keyof Values | 'labels'>;
const noPropWithoutKey: [MissingKeys] extends [never] ? true : MissingKeys = true;
void valuesAreProps;
void noPropWithoutKey;

const EXPECTED: Record<string, string> = {
  string: 'a string',
  boolean: 'true or false',
  number: 'an integer',
  int: 'an integer',
  array: 'a list',
  object: 'a mapping',
  record: 'a mapping',
};

/** `ha.enabled`, `tolerations[0].effect`, `nodeSelector["kubernetes.io/os"]`. */
function keyPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const k of path) {
    if (typeof k === 'number') out += `[${k}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(String(k))) out += out ? `.${String(k)}` : String(k);
    else out += `[${JSON.stringify(String(k))}]`;
  }
  return out || 'the file';
}

function describe(issue: z.core.$ZodIssue): string {
  const got = 'input' in issue && issue.input !== undefined ? `, got ${JSON.stringify(issue.input)}` : '';
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((k) => `unknown key ${keyPath([...issue.path, k])}`).join('; ');
    case 'invalid_type':
      return `${keyPath(issue.path)} must be ${EXPECTED[issue.expected] ?? issue.expected}${got}`;
    case 'invalid_value':
      return `${keyPath(issue.path)} must be one of ${issue.values.map(String).join(', ')}${got}`;
    default:
      return `${keyPath(issue.path)}: ${issue.message}${got}`;
  }
}

/** Drops keys whose value is undefined (an empty key in YAML), so the props hold only what was set. */
function dropUndefined(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropUndefined);
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== undefined)
        .map(([k, x]) => [k, dropUndefined(x)]),
    );
  }
  return v;
}

/** The YAML text of a values file as a map (an empty file is an empty map). */
function valuesDocument(text: string, source: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new ValuesError(`${source}: not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new ValuesError(`${source}: must be a mapping of keys to values`);
  return doc as Record<string, unknown>;
}

/** Checks a values document against the schema; `source` names where it came from in errors. */
function validValues(doc: Record<string, unknown>, source: string): EchoperatorProps {
  const result = VALUES_SCHEMA.safeParse(doc, { reportInput: true });
  if (!result.success) throw new ValuesError(`${source}: ${result.error.issues.map(describe).join('; ')}`);
  return dropUndefined(result.data) as EchoperatorProps;
}

/** Parses values YAML text into props; `source` names the file in errors. */
export function parseValues(text: string, source = 'values.yaml'): EchoperatorProps {
  return validValues(valuesDocument(text, source), source);
}

/** Where the values of one synth come from, in Helm's order of precedence (later wins). */
export interface ValuesSources {
  /** Values files merged in order over infra/values.yaml, as `helm -f a.yaml -f b.yaml`. */
  readonly files?: readonly string[];
  /** `--set` arguments, applied in order over the files (Helm's syntax: infra/set-values.ts). */
  readonly set?: readonly string[];
  /** `--set-string` arguments, applied after the `--set` ones; every value a string. */
  readonly setString?: readonly string[];
}

/**
 * The props of one synth: infra/values.yaml, the files merged over it, the --set and --set-string
 * arguments applied, then ECHOPERATOR_HA; checked once, on the result, as Helm checks
 * values.schema.json against the merged values.
 */
export function valuesFromSources(sources: ValuesSources, env: NodeJS.ProcessEnv = process.env): EchoperatorProps {
  let values = valuesDocument(readFileSync(VALUES_FILE, 'utf8'), VALUES_FILE.pathname);
  for (const file of sources.files ?? []) values = mergeValues(values, valuesDocument(readFileSync(file, 'utf8'), file));
  for (const expression of sources.set ?? []) values = applySetArgument(values, expression);
  for (const expression of sources.setString ?? []) values = applySetArgument(values, expression, true);
  const named = [...(sources.files ?? []), ...(sources.set?.length || sources.setString?.length ? ['--set'] : [])];
  return applyEnvOverrides(validValues(values, named.length ? named.join(', ') : VALUES_FILE.pathname), env);
}

/** Applies ECHOPERATOR_HA (when set and non-empty) over the values' ha.enabled. */
export function applyEnvOverrides(props: EchoperatorProps, env: NodeJS.ProcessEnv = process.env): EchoperatorProps {
  const raw = env[HA_ENV]?.trim();
  if (raw === undefined || raw === '') return props;
  if (raw !== 'true' && raw !== 'false') {
    throw new ValuesError(`${HA_ENV} must be true or false, got ${JSON.stringify(raw)}`);
  }
  return { ...props, ha: { ...props.ha, enabled: raw === 'true' } };
}

/** The props of the install: infra/values.yaml (or `file`) plus the environment override. */
export function loadValues(file: string | URL = VALUES_FILE, env: NodeJS.ProcessEnv = process.env): EchoperatorProps {
  const source = typeof file === 'string' ? file : file.pathname;
  return applyEnvOverrides(parseValues(readFileSync(file, 'utf8'), source), env);
}
