/**
 * The values file's JSON Schema (draft-07), committed as infra/values.schema.json for editors,
 * `helm lint` and CI tools: VALUES_SCHEMA as the user writes it, every default as written, and the
 * two rules across keys that draft-07 can say.
 */
import { fileURLToPath } from 'node:url';
import { format, resolveConfig } from 'prettier';
import { z } from 'zod';
import { DEFAULTS } from './props.js';
import { VALUES_SCHEMA } from './values-schema-root.js';

/**
 * monitoring.port and monitoring.path (the Go chart's names) must equal metrics.port and
 * metrics.path. Draft-07 cannot compare two values of a document, so the JSON Schema says what it
 * can: without metrics.port (or metrics.path) set, the Go chart's key must hold the default.
 * infra/values.ts checks the equality itself, as the Helm chart's templates do.
 */
function goChartAliasRules(): Record<string, unknown>[] {
  const aliases = [
    ['port', { type: 'integer' }, DEFAULTS.metrics.port],
    ['path', { type: 'string' }, DEFAULTS.metrics.path],
  ] as const;
  return aliases.map(([key, type, value]) => ({
    if: { not: { required: ['metrics'], properties: { metrics: { type: 'object', required: [key], properties: { [key]: type } } } } },
    then: { properties: { monitoring: { properties: { [key]: { anyOf: [{ const: value }, { type: 'null' }] } } } } },
  }));
}

/**
 * A ServiceMonitor needs a certificate it can verify: monitoring.enabled without metrics.certSecret
 * (or plain HTTP) only with monitoring.insecureSkipVerify: true, as the construct refuses it (the
 * Go chart's values.yaml sets monitoring.enabled and neither way out).
 */
function verifiableScrapeRule(): Record<string, unknown> {
  // `parent.key` is present and matches `schema`.
  const set = (parent: string, key: string, schema: Record<string, unknown>) => ({
    required: [parent],
    properties: { [parent]: { type: 'object', required: [key], properties: { [key]: schema } } },
  });
  return {
    if: {
      allOf: [
        set('monitoring', 'enabled', { const: true }),
        { not: set('metrics', 'certSecret', { type: 'string' }) },
        { not: set('metrics', 'insecurePlainHttp', { const: true }) },
      ],
    },
    then: set('monitoring', 'insecureSkipVerify', { const: true }),
  };
}

/** The JSON Schema (draft-07) of the values file, as committed in infra/values.schema.json. */
export function valuesJsonSchema(): Record<string, unknown> {
  const schema = z.toJSONSchema(VALUES_SCHEMA, {
    target: 'draft-7',
    io: 'input',
    unrepresentable: 'throw',
    override: ({ zodSchema, jsonSchema }) => {
      // z.int()'s safe-integer bounds say nothing a reader needs.
      if (jsonSchema.minimum === Number.MIN_SAFE_INTEGER) delete jsonSchema.minimum;
      if (jsonSchema.maximum === Number.MAX_SAFE_INTEGER) delete jsonSchema.maximum;
      // With io 'input', zod drops the default of a schema holding a transform (extraEnv's divisor
      // quantity), as defaults are outputs; every default here is written as the user writes it.
      const dflt = z.globalRegistry.get(zodSchema)?.default;
      if (dflt !== undefined) jsonSchema.default = dflt;
    },
  });
  return { ...schema, allOf: [...goChartAliasRules(), verifiableScrapeRule()] };
}

/** Where the JSON Schema is committed: beside values.yaml, under Helm's name for it. */
export const VALUES_SCHEMA_FILE = new URL('./values.schema.json', import.meta.url);

/** The exact text of infra/values.schema.json: formatted by the repository's prettier, as every file is. */
export async function valuesJsonSchemaText(): Promise<string> {
  const filepath = fileURLToPath(VALUES_SCHEMA_FILE);
  return format(JSON.stringify(valuesJsonSchema()), { ...(await resolveConfig(filepath)), parser: 'json', filepath });
}
