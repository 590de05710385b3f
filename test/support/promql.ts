/**
 * Just enough PromQL reading to check dashboard and alert queries against the operator's own
 * metrics, without a Prometheus: the metric names a query reads, the matchers of each selector,
 * and the template variables it names. It assumes every metric is written as `name{matchers}`
 * (as the dashboard's queries are) and reports anything else it cannot place, so a query that
 * escapes this reading fails the check instead of passing unread.
 */
import type { Registry } from 'prom-client';

export interface Selector {
  metric: string;
  /** label -> `op"value"`, e.g. namespace -> `="$namespace"`. */
  matchers: Map<string, string>;
}

const SELECTOR = /([A-Za-z_:][A-Za-z0-9_:]*)\s*\{([^}]*)\}/g;
const MATCHER = /^\s*([A-Za-z_][A-Za-z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*$/;
/** Words that are PromQL rather than a metric: set operators and the bool modifier. */
const KEYWORDS = new Set(['and', 'or', 'unless', 'bool', 'offset']);

/** Every `metric{...}` selector of `expr`. */
export function selectorsOf(expr: string): Selector[] {
  return [...expr.matchAll(SELECTOR)].map(([, metric, body]) => {
    const matchers = new Map<string, string>();
    for (const part of body!.split(',').filter((p) => p.trim() !== '')) {
      const m = MATCHER.exec(part);
      if (!m) throw new Error(`unreadable matcher ${JSON.stringify(part)} in ${expr}`);
      matchers.set(m[1]!, `${m[2]}"${m[3]}"`);
    }
    return { metric: metric!, matchers };
  });
}

/**
 * Words of `expr` that are neither a selector's metric, a function, a grouping's labels, a
 * duration, a number nor a keyword: metrics read without `{...}` (so without the selector).
 */
export function bareNames(expr: string): string[] {
  const rest = expr
    .replace(SELECTOR, ' ')
    .replace(/\[[^\]]*\]/g, ' ')
    .replace(/\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)/g, ' ')
    .replace(/\b\d+(\.\d+)?([eE][+-]?\d+)?\b/g, ' ');
  return [...rest.matchAll(/([A-Za-z_:][A-Za-z0-9_:]*)\s*(\()?/g)]
    .filter(([, word, call]) => !call && !KEYWORDS.has(word!))
    .map(([, w]) => w!);
}

/** The template variables `expr` names, `$name` or `${name}`, without the `$`. */
export function variablesOf(expr: string): string[] {
  return [...expr.matchAll(/\$\{?([A-Za-z_][A-Za-z0-9_]*)/g)].map(([, name]) => name!);
}

/**
 * The series names `registry` exports: each metric's name, and for histograms the
 * `_bucket`, `_sum` and `_count` series a query reads instead.
 */
export async function exportedSeriesNames(registry: Registry): Promise<Set<string>> {
  const names = new Set<string>();
  for (const m of await registry.getMetricsAsJSON()) {
    const type = String(m.type);
    if (type === 'histogram') for (const suffix of ['_bucket', '_sum', '_count']) names.add(`${m.name}${suffix}`);
    else names.add(m.name);
  }
  return names;
}

/**
 * What is wrong with `expr` as a query on the operator's series: metric names not in `exported`,
 * metrics read without `required`'s matchers (label -> `="value"`), bare names, and template
 * variables outside `allowedVariables`. Empty when it is right.
 */
export function queryProblems(
  expr: string,
  exported: ReadonlySet<string>,
  required: Readonly<Record<string, string>>,
  allowedVariables: ReadonlySet<string>,
): string[] {
  const problems: string[] = [];
  const selectors = selectorsOf(expr);
  if (selectors.length === 0) problems.push('reads no metric');
  for (const { metric, matchers } of selectors) {
    if (!exported.has(metric)) problems.push(`reads ${metric}, which the operator does not export`);
    for (const [label, want] of Object.entries(required)) {
      if (matchers.get(label) !== want) problems.push(`reads ${metric} without ${label}${want}`);
    }
  }
  for (const name of bareNames(expr)) problems.push(`reads ${name} without a selector`);
  for (const v of variablesOf(expr)) if (!allowedVariables.has(v)) problems.push(`names the variable $${v}`);
  return problems;
}
