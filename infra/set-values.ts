/**
 * Helm's `--set` and `--set-string` syntax, and Helm's merge of values files, for `npm run synth`,
 * so that one command line works with both (`-f a.yaml -f b.yaml --set ha.enabled=true`).
 *
 * Written here because Helm's parser (helm.sh/helm/v4/pkg/strvals) is Go and no maintained npm
 * package implements it; this follows its documented behaviour
 * (https://helm.sh/docs/intro/using_helm/#the-format-and-limitations-of---set):
 *
 *   a=b,c=d          two keys; a comma separates assignments
 *   outer.inner=x    nested maps; `\.` is a literal dot in a key (`nodeSelector.kubernetes\.io/os=linux`)
 *   list={a,b,c}     a list; `list[0]=a` or `list[1].name=x` sets one element (earlier ones become null)
 *   name=a\,b        `\,` is a literal comma in a value
 *   key=null         removes the key (a value from a file, or a default)
 *   applied in order, into the values merged from the files
 *   values           `true`/`false` become booleans, integers numbers, `null` null, the rest strings;
 *                    with --set-string every value is a string
 *
 * Merging, as Helm merges `-f` files over the chart's values.yaml and `--set` over them: maps merge
 * key by key, anything else (lists included) is replaced, and a null removes the key.
 */

export class SetValuesError extends Error {
  override readonly name = 'SetValuesError';
}

type Values = Record<string, unknown>;

const isMap = (v: unknown): v is Values => typeof v === 'object' && v !== null && !Array.isArray(v);

/** `base` with `overlay` merged over it, as Helm merges values; neither is changed. */
export function mergeValues(base: Values, overlay: Values): Values {
  const out: Values = { ...base };
  for (const [key, value] of Object.entries(overlay)) {
    if (value === null) delete out[key];
    else if (isMap(value) && isMap(out[key])) out[key] = mergeValues(out[key], value);
    else out[key] = value;
  }
  return out;
}

/** Splits `text` at each unescaped `separator` outside braces; escapes are kept for the next step. */
function splitUnescaped(text: string, separator: string): string[] {
  const parts: string[] = [];
  let current = '';
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === '\\' && i + 1 < text.length) {
      current += c + text[++i];
      continue;
    }
    if (c === '{') depth++;
    if (c === '}') depth = Math.max(0, depth - 1);
    if (c === separator && depth === 0) {
      parts.push(current);
      current = '';
    } else current += c;
  }
  parts.push(current);
  return parts;
}

const unescape = (text: string): string => text.replace(/\\(.)/g, '$1');

function typed(raw: string, asString: boolean): unknown {
  const text = unescape(raw);
  if (asString) return text;
  if (raw === 'true') return true;
  if (raw === 'false') return false;
  if (raw === 'null') return null;
  // Helm keeps integers with a leading zero (`0123`) as strings; so does this.
  if (/^-?(0|[1-9][0-9]*)$/.test(raw) && Number.isSafeInteger(Number(raw))) return Number(raw);
  return text;
}

function parsedValue(raw: string, asString: boolean): unknown {
  if (raw.startsWith('{') && raw.endsWith('}')) {
    const inner = raw.slice(1, -1);
    return inner === '' ? [] : splitUnescaped(inner, ',').map((item) => typed(item, asString));
  }
  return typed(raw, asString);
}

/** A key path: map keys, and list indexes for `name[2]`. */
function keyPath(rawKey: string, expression: string): (string | number)[] {
  const path: (string | number)[] = [];
  for (const segment of splitUnescaped(rawKey, '.')) {
    const m = /^((?:[^[\\]|\\.)*)((?:\[[0-9]+\])*)$/.exec(segment);
    const name = m ? unescape(m[1]!) : '';
    if (!m || name === '') throw new SetValuesError(`--set ${expression}: ${JSON.stringify(rawKey)} has an empty or malformed key`);
    path.push(name);
    for (const index of m[2]!.matchAll(/\[([0-9]+)\]/g)) {
      const i = Number(index[1]);
      // Helm's limit: a list index this large would allocate that many nulls.
      if (i > 65_536) throw new SetValuesError(`--set ${expression}: index ${i} is larger than 65536`);
      path.push(i);
    }
  }
  return path;
}

function assign(target: Values, path: (string | number)[], value: unknown): void {
  let node: Values | unknown[] = target;
  for (let i = 0; i < path.length; i++) {
    const key = path[i]!;
    const last = i === path.length - 1;
    const nextIsIndex = !last && typeof path[i + 1] === 'number';
    if (Array.isArray(node)) {
      const index = key as number;
      while (node.length < index) node.push(null);
      if (last) node[index] = value;
      else {
        const child: unknown = node[index];
        node[index] = nextIsIndex ? (Array.isArray(child) ? child : []) : isMap(child) ? child : {};
        node = node[index] as Values | unknown[];
      }
    } else {
      const name = key as string;
      if (last) {
        if (value === null) delete node[name];
        else node[name] = value;
      } else {
        const child = node[name];
        node[name] = nextIsIndex ? (Array.isArray(child) ? child : []) : isMap(child) ? child : {};
        node = node[name] as Values | unknown[];
      }
    }
  }
}

/**
 * `values` with one `--set` argument (or, with asString, `--set-string`) applied, as Helm applies
 * it: into the values merged from the files, so `list[1]=x` changes one element of a list a file
 * set, and `key=null` removes the key. `values` is not changed.
 */
export function applySetArgument(values: Values, expression: string, asString = false): Values {
  const out = structuredClone(values);
  for (const assignment of splitUnescaped(expression, ',')) {
    if (assignment === '') continue;
    const eq = splitUnescaped(assignment, '=');
    if (eq.length < 2) throw new SetValuesError(`--set ${expression}: ${JSON.stringify(assignment)} is not key=value`);
    const [rawKey, ...rest] = eq;
    assign(out, keyPath(rawKey!, expression), parsedValue(rest.join('='), asString));
  }
  return out;
}
