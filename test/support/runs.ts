/**
 * What the node tier's tests share: an operator for one namespace (or a pair, one whose runs
 * fail), waiting for an Echo's phase, and reading what the pod of its current run printed
 * (`kubectl logs`, through the kubelet).
 */
import type { TestContext } from 'node:test';
import type { Echo } from '../../src/api/echo.js';
import { FAILING_JOB_IMAGE } from '../../scripts/ship/image/images.js';
import { eventually, kubectlJson, kubectlOk, testNamespace } from './kube.js';
import { installCrds, startOperator, waitReady, type OperatorProcess } from './operator.js';

export function getEcho(ns: string, name: string): Echo {
  return kubectlJson<Echo>(['get', 'echo', name], { namespace: ns });
}

export async function operatorFor(t: TestContext, ns: string, env: Record<string, string> = {}): Promise<OperatorProcess> {
  installCrds();
  const op = await startOperator(t, { WATCH_NAMESPACES: ns, NAMESPACE: ns, ...env });
  await waitReady(op);
  return op;
}

/**
 * Two namespaces whose pods run, each with an operator: `ns` with the default job image, `failing`
 * with FAILING_JOB_IMAGE (every run fails), named `<prefix>-ok` and `<prefix>-fail`; `op` is `ns`'s operator.
 */
export async function okAndFailingNamespaces(
  t: TestContext,
  prefix: string,
): Promise<{ ns: string; failing: string; op: OperatorProcess }> {
  const ns = testNamespace(t, `${prefix}-ok`, {}, { pods: true });
  const failing = testNamespace(t, `${prefix}-fail`, {}, { pods: true });
  const op = await operatorFor(t, ns);
  await operatorFor(t, failing, { JOB_IMAGE: FAILING_JOB_IMAGE });
  return { ns, failing, op };
}

/**
 * Waits for the Echo's phase. The bound is generous because the tests share one
 * kube-controller-manager, whose client sends at most 20 requests/s: a test that makes 1,500 Jobs
 * at once (events-backlog) keeps the job controller from creating other tests' pods for a minute
 * or two. A run itself takes seconds.
 */
export async function phase(ns: string, name: string, want: string, timeoutMs = 240_000): Promise<Echo> {
  return eventually(`Echo ${name} ${want}`, () => getEcho(ns, name).status?.phase === want && getEcho(ns, name), timeoutMs);
}

/** What the pod of the Echo's current run printed, exactly (kubectl logs through the kubelet). */
export function printed(ns: string, echo: Echo): string {
  return kubectlOk(['logs', `job/${echo.status!.jobName!}`], { namespace: ns });
}
