/**
 * The 95 % upper confidence bound on a failure rate, from k failures in n trials: one-sided
 * Clopper-Pearson (exact: the p at which seeing k or fewer failures has probability 5 %). For
 * k = 0 it is 1 - 0.05^(1/n), about 3/n (the "rule of three"). Pure.
 */

/** P(X <= k) for X ~ Binomial(n, p), summed in log space (n in the thousands stays exact enough). */
export function binomialCdf(k: number, n: number, p: number): number {
  if (k >= n || p <= 0) return 1;
  if (p >= 1) return 0;
  let logTerm = n * Math.log1p(-p); // i = 0
  let sum = Math.exp(logTerm);
  for (let i = 1; i <= k; i++) {
    logTerm += Math.log((n - i + 1) / i) + Math.log(p) - Math.log1p(-p);
    sum += Math.exp(logTerm);
  }
  return Math.min(1, sum);
}

/** The one-sided upper bound on the rate at confidence 1 - alpha, for k of n (n >= 1, 0 <= k <= n). */
export function upperBound(k: number, n: number, alpha = 0.05): number {
  if (!Number.isInteger(n) || n < 1 || !Number.isInteger(k) || k < 0 || k > n)
    throw new RangeError(`upperBound: need integers 0 <= k <= n, n >= 1; got k=${k}, n=${n}`);
  if (k === n) return 1;
  if (k === 0) return 1 - alpha ** (1 / n);
  // binomialCdf falls as p grows: bisect for the p where it crosses alpha.
  let lo = k / n;
  let hi = 1;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (binomialCdf(k, n, mid) > alpha) lo = mid;
    else hi = mid;
  }
  return hi;
}

/** As the report prints it: "≤ 17.1 %", or "-" without trials. */
export function boundText(k: number, n: number): string {
  return n < 1 ? '-' : `≤ ${(upperBound(k, n) * 100).toFixed(1)} %`;
}
