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

/** Parses values YAML text into props; `source` names the file in errors. */
export function parseValues(text: string, source = 'values.yaml'): EchoperatorProps {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new ValuesError(`${source}: not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  const result = VALUES_SCHEMA.safeParse(doc, { reportInput: true });
  if (!result.success) throw new ValuesError(`${source}: ${result.error.issues.map(describe).join('; ')}`);
  return dropUndefined(result.data) as EchoperatorProps;
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
