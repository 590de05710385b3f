/**
 * The README's values table, made from infra/values.schema.json (the one schema of the values that
 * `npm run synth` and the Helm chart read), so the table can only say what the schema says: one row
 * per key the schema defines, in the schema's order, with its accepted values, its default and its
 * description. A key the schema gains or loses changes the table; a unit test
 * (test/unit/readme.test.ts) keeps the committed README equal to it.
 *
 * Where a row ends: a key whose schema has properties is a row of its own when it carries a
 * description that none of its properties carries (a Kubernetes structure such as `affinity`, or
 * `jobMaxResources`), else its properties are rows (`ha.leaderElection.leaseName`). Lists, maps and
 * `$ref`s are always one row.
 */
import { readFileSync } from 'node:fs';
import { stringify } from 'yaml';
import { VALUES_SCHEMA_FILE } from '../../../infra/values-schema.js';

/** The part of a draft-07 JSON Schema the table reads. */
export interface JsonSchema {
  type?: string | string[];
  description?: string;
  default?: unknown;
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  properties?: Record<string, JsonSchema>;
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  anyOf?: JsonSchema[];
  $ref?: string;
}

export interface ValuesRow {
  key: string;
  accepts: string;
  default: string;
  description: string;
}

/** Where the README's table starts and ends; the generator replaces what lies between. */
export const TABLE_BEGIN = '<!-- values-table: made by scripts/ship/gen/values-table.ts from infra/values.schema.json; do not edit -->';
export const TABLE_END = '<!-- /values-table -->';

const isNull = (s: JsonSchema): boolean => s.type === 'null';

/**
 * The schema of the value itself, and the description and default said on it or on the optional
 * wrapper around it (zod writes an optional key as `anyOf: [value, {type: 'null'}]`).
 */
function unwrap(node: JsonSchema): { value: JsonSchema; description?: string; default?: unknown } {
  const branches = node.anyOf?.filter((b) => !isNull(b)) ?? [];
  const value = branches.length === 1 ? branches[0]! : node;
  return { value, description: node.description ?? value.description, default: node.default ?? value.default };
}

function hasDescription(node: JsonSchema): boolean {
  const { value, description } = unwrap(node);
  return description !== undefined || Object.values(value.properties ?? {}).some(hasDescription);
}

/** The type without `null` (which only means "the default"). */
function baseTypes(s: JsonSchema): string[] {
  return (Array.isArray(s.type) ? s.type : s.type ? [s.type] : []).filter((t) => t !== 'null');
}

function code(text: string): string {
  return `\`${text}\``;
}

/** A value as a YAML flow scalar or collection, the way a values file writes it. */
function yamlValue(v: unknown): string {
  if (v === '') return '""';
  return stringify(v, { collectionStyle: 'flow', lineWidth: 0 }).trim();
}

/** What a key accepts, in a few words: a type, a range, a length or the allowed values. */
export function accepts(node: JsonSchema): string {
  const s = unwrap(node).value;
  if (s.enum) return s.enum.map((v) => code(yamlValue(v))).join(', ');
  if (s.const !== undefined) return code(yamlValue(s.const));
  if (s.$ref) return 'object';
  if (s.anyOf)
    return s.anyOf
      .filter((b) => !isNull(b))
      .map(accepts)
      .join(' or ');
  const types = baseTypes(s);
  const type = types.join(' or ');
  if (type === 'integer' || type === 'number') {
    if (s.minimum !== undefined && s.maximum !== undefined) return `${type} ${s.minimum}-${s.maximum}`;
    if (s.minimum !== undefined) return `${type} >= ${s.minimum}`;
    if (s.maximum !== undefined) return `${type} <= ${s.maximum}`;
    return type;
  }
  if (type === 'string' && s.maxLength !== undefined) return `string, at most ${s.maxLength} characters`;
  if (type === 'array') return 'list';
  if (type === 'object' && !s.properties) return 'map';
  return type || 'any';
}

/** A table cell: one line, its pipes escaped. */
function cell(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ').replace(/\|/g, '\\|');
}

/** Every row of the values table, in the schema's order. */
export function valuesRows(schema: JsonSchema, prefix = ''): ValuesRow[] {
  const rows: ValuesRow[] = [];
  for (const [name, node] of Object.entries(schema.properties ?? {})) {
    const key = `${prefix}${name}`;
    const { value, description, default: dflt } = unwrap(node);
    const children = Object.values(value.properties ?? {});
    const describedHere = description !== undefined && !children.some(hasDescription);
    if (children.length === 0 || describedHere) {
      rows.push({
        key,
        accepts: accepts(node),
        default: dflt === undefined ? '' : code(yamlValue(dflt)),
        description: description ?? '',
      });
      continue;
    }
    if (description !== undefined) rows.push({ key, accepts: 'object', default: '', description });
    rows.push(...valuesRows(value, `${key}.`));
  }
  return rows;
}

/** The Markdown table of `valuesRows(schema)`, with the markers around it. */
export function valuesTable(schema: JsonSchema): string {
  const lines = [
    TABLE_BEGIN,
    '| key | accepts | default | meaning |',
    '| --- | --- | --- | --- |',
    ...valuesRows(schema).map((r) => `| ${code(r.key)} | ${cell(r.accepts)} | ${cell(r.default)} | ${cell(r.description)} |`),
    TABLE_END,
  ];
  return lines.join('\n');
}

/** `readme` with the text from TABLE_BEGIN to TABLE_END replaced by `table`; throws when a marker is missing. */
export function withValuesTable(readme: string, table: string): string {
  const begin = readme.indexOf(TABLE_BEGIN);
  const end = readme.indexOf(TABLE_END, begin);
  if (begin < 0 || end < 0) throw new Error(`README.md has no values table: it needs the lines\n${TABLE_BEGIN}\n${TABLE_END}`);
  return readme.slice(0, begin) + table + readme.slice(end + TABLE_END.length);
}

export const README_FILE = new URL('../../../README.md', import.meta.url);

/** README.md as it should be: the committed text with the table made from the committed infra/values.schema.json. */
export function expectedReadme(): string {
  const schema = JSON.parse(readFileSync(VALUES_SCHEMA_FILE, 'utf8')) as JsonSchema;
  return withValuesTable(readFileSync(README_FILE, 'utf8'), valuesTable(schema));
}
