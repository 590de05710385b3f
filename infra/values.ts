/**
 * infra/values.yaml -> EchoperatorProps, with the one environment override: ECHOPERATOR_HA.
 * Unknown keys and wrongly typed values are errors naming the key, so a typo cannot silently
 * fall back to a default.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { EchoperatorProps } from './echoperator.js';

export const VALUES_FILE = new URL('./values.yaml', import.meta.url);

/** Overrides values.yaml's ha.enabled for one synth: 'true' or 'false' (empty = unset). */
export const HA_ENV = 'ECHOPERATOR_HA';

export class ValuesError extends Error {
  override readonly name = 'ValuesError';
}

type Kind = 'string' | 'boolean' | 'integer' | 'string[]' | 'string map' | Schema;
interface Schema {
  [key: string]: Kind;
}

const quantities: Schema = { cpu: 'string', memory: 'string' };
const SCHEMA: Schema = {
  namespace: 'string',
  createNamespace: 'boolean',
  installCrds: 'boolean',
  name: 'string',
  image: 'string',
  imagePullPolicy: 'string',
  command: 'string[]',
  args: 'string[]',
  workers: 'integer',
  watchNamespaces: 'string[]',
  logLevel: 'string',
  metrics: {
    enabled: 'boolean',
    port: 'integer',
    path: 'string',
    insecurePlainHttp: 'boolean',
    certSecret: 'string',
    networkPolicy: { enabled: 'boolean', namespaceLabels: 'string map' },
  },
  healthPort: 'integer',
  resources: { requests: quantities, limits: quantities },
  jobImage: 'string',
  ha: {
    enabled: 'boolean',
    replicas: 'integer',
    leaseDurationSeconds: 'integer',
    renewDeadlineSeconds: 'integer',
    retryPeriodSeconds: 'integer',
    leaseName: 'string',
  },
  terminationGracePeriodSeconds: 'integer',
  confineServiceAccount: 'boolean',
};

function check(value: unknown, kind: Kind, path: string, source: string): void {
  const bad = (expected: string): never => {
    throw new ValuesError(`${source}: ${path} must be ${expected}, got ${JSON.stringify(value)}`);
  };
  if (kind === 'string') {
    if (typeof value !== 'string') bad('a string');
  } else if (kind === 'boolean') {
    if (typeof value !== 'boolean') bad('true or false');
  } else if (kind === 'integer') {
    if (!Number.isInteger(value)) bad('an integer');
  } else if (kind === 'string map') {
    if (typeof value !== 'object' || value === null || Array.isArray(value) || !Object.values(value).every((v) => typeof v === 'string')) {
      bad('a mapping of strings to strings');
    }
  } else if (kind === 'string[]') {
    if (!Array.isArray(value) || !value.every((v) => typeof v === 'string')) bad('a list of strings');
  } else {
    if (typeof value !== 'object' || value === null || Array.isArray(value)) bad('a mapping');
    for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
      const sub = kind[k];
      const where = path ? `${path}.${k}` : k;
      if (sub === undefined) {
        throw new ValuesError(`${source}: unknown key ${where} (known: ${Object.keys(kind).join(', ')})`);
      }
      // A key left empty in YAML (`image:`) means "use the default".
      if (v !== null) check(v, sub, where, source);
    }
  }
}

function dropNulls(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropNulls);
  if (v && typeof v === 'object') {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== null)
        .map(([k, x]) => [k, dropNulls(x)]),
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
  check(doc, SCHEMA, '', source);
  return dropNulls(doc) as EchoperatorProps;
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
