/**
 * The dashboard's queries made runnable outside Grafana: its template variables replaced by the
 * values Grafana would give them for one install and one time range.
 *
 * Guarantee: the result names no variable. A query with a variable this does not know (the
 * dashboard allows `$namespace`, `$job`, `$__rate_interval`, `$__interval`, `$__range` only) throws,
 * naming it, rather than being sent to Prometheus half-substituted.
 */

export interface PanelVariables {
  namespace: string;
  job: string;
  /** A PromQL duration, e.g. `300s`. */
  rateInterval: string;
  interval: string;
  range: string;
}

export function substitutePanelVariables(expr: string, v: PanelVariables): string {
  const out = expr
    .replaceAll('$__rate_interval', v.rateInterval)
    .replaceAll('$__interval', v.interval)
    .replaceAll('$__range', v.range)
    .replaceAll('$namespace', v.namespace)
    .replaceAll('$job', v.job);
  const left = /\$\{?[A-Za-z_]\w*/.exec(out);
  if (left) throw new Error(`dashboard query uses the unknown variable ${left[0]}: ${expr}`);
  return out;
}
