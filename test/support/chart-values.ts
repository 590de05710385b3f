/**
 * What the chart tests do to values: uncomment every commented key of a values.yaml (the
 * documented examples, as a user would uncomment them), and make one values document per string
 * or integer value of the values schema, holding a payload that would inject YAML if a template
 * printed it unquoted.
 */

/** `# key: value` (a commented key), not prose (`# Tenant roles: ...` has a space before its colon). */
const COMMENTED_KEY = /^ *# [A-Za-z][\w./-]*:( |$)/;
/** Under a commented key: a deeper line (`#   tag: ""`, `#   - {...}`) or a trailing comment (`#     # ...`). */
const CONTINUATION = /^ *# {2,}\S|^ *# +#/;

/**
 * Every commented key of a values file uncommented, with the lines that continue it. Comments
 * before the first key (the file's header, `# yaml-language-server: ...`) stay comments, as does
 * prose. Returns the text and how many keys were uncommented.
 */
export function uncommentKeys(text: string): { text: string; keys: number } {
  let seenKey = false;
  let inBlock = false;
  let keys = 0;
  const out = text.split('\n').map((line) => {
    if (!/^ *#/.test(line)) {
      if (/^[A-Za-z]/.test(line)) seenKey = true;
      inBlock = false;
      return line;
    }
    const startsKey = seenKey && COMMENTED_KEY.test(line);
    if (startsKey || (inBlock && CONTINUATION.test(line))) {
      if (startsKey) keys++;
      inBlock = true;
      return line.replace(/^( *)# /, '$1');
    }
    inBlock = false;
    return line;
  });
  return { text: out.join('\n'), keys };
}

/** A JSON Schema node, as much as the walk reads. */
interface SchemaNode {
  type?: string | string[];
  anyOf?: SchemaNode[];
  $ref?: string;
  properties?: Record<string, SchemaNode>;
  additionalProperties?: SchemaNode | boolean;
  items?: SchemaNode;
}

/** One values document per string or integer value of `schema`, each holding `payload` there, with its key path. */
export function valuesWithPayload(
  schema: SchemaNode & { definitions?: Record<string, SchemaNode> },
  payload: string,
): { key: string; values: unknown }[] {
  const resolve = (node: SchemaNode): SchemaNode => (node.$ref ? schema.definitions![node.$ref.replace('#/definitions/', '')]! : node);
  const walk = (raw: SchemaNode, key: string, depth: number): { key: string; values: unknown }[] => {
    const node = resolve(raw);
    if (depth > 8) return [];
    if (node.anyOf) return node.anyOf.flatMap((branch) => walk(branch, key, depth + 1));
    const types = [node.type ?? []].flat();
    if (types.includes('string') || types.includes('integer')) return [{ key, values: payload }];
    if (types.includes('array') && node.items) {
      return walk(node.items, `${key}[0]`, depth + 1).map((c) => ({ key: c.key, values: [c.values] }));
    }
    if (types.includes('object')) {
      const fields = Object.entries(node.properties ?? {}).flatMap(([name, sub]) =>
        walk(sub, key ? `${key}.${name}` : name, depth + 1).map((c) => ({ key: c.key, values: { [name]: c.values } })),
      );
      const extra = typeof node.additionalProperties === 'object' ? node.additionalProperties : undefined;
      const entries = extra ? walk(extra, `${key}.zkeyz`, depth + 1).map((c) => ({ key: c.key, values: { zkeyz: c.values } })) : [];
      return [...fields, ...entries];
    }
    return [];
  };
  return walk(schema, '', 0);
}
