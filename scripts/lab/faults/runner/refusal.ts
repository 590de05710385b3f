/**
 * Plays the refusal class (classes/refusal.ts): before the workload's first write, the admin puts
 * a refusal of Job creates in force in the schedule's namespace (a ValidatingAdmissionPolicy whose
 * one validation is false, bound to the namespace; and/or a ResourceQuota of zero
 * count/jobs.batch) and waits until the server enforces it; `windowMs` after the first write it
 * lifts it (deletes them).
 *
 * In force means: for the policy, a dry-run Job create by the admin is refused; for the quota, the
 * quota controller has written its status (the quota admission refuses nothing it has no usage
 * for). The refusals counted are the replicas' Job creates the server answered 403 or 422, from
 * their proxies' write logs. A program that reports the refusal in an Echo's status conditions
 * (ours does: Reconciled False with the server's message) must stop reporting it within
 * STUCK_AFTER_MS of the lift; one that still does is stuck (refusalViolations).
 *
 * Guarantees: whatever fails, the policy, binding and quota are deleted before playRefusal
 * resolves (or armRefusal, when the server did not enforce them in time).
 */
import type { RestClient } from '../../../../src/kube/rest.js';
import { errorCode, isNotFound } from '../../../../src/kube/errors.js';
import { denyJobCreates, PROBE_JOB } from '../../../testbed/admission.js';
import { eventually } from '../../../testbed/eventually.js';
import { sleep } from '../../bench/log.js';
import { ECHOS, type Echo } from '../../../../src/api/echo.js';
import { resourcePath } from '../../../../src/kube/resources.js';
import {
  namesRefusal,
  REFUSAL_MESSAGE,
  REFUSAL_QUOTA,
  refusedCreates,
  STUCK_AFTER_MS,
  type RefusalEffects,
  type RefusalFaults,
} from '../classes/refusal.js';
import type { FaultRun } from './context.js';

/** The schedule being played, as this class's code sees it. */
type FaultContext = FaultRun<{ refusal?: RefusalEffects }>;

const POLICIES = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies';
const BINDINGS = '/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings';
const quotas = (ns: string): string => `/api/v1/namespaces/${ns}/resourcequotas`;
const jobs = (ns: string): string => `/apis/batch/v1/namespaces/${ns}/jobs`;
/** How long the server may take to enforce a new refusal. */
const IN_FORCE_TIMEOUT_MS = 15_000;

const policyName = (namespace: string): string => `faults-refuse-jobs-${namespace}`;

/** The policy and its binding: Job creates in `namespace` are refused (422 Invalid, the default reason). */
export function refusalPolicy(namespace: string): { policy: object; binding: object } {
  const [policy, binding] = denyJobCreates(policyName(namespace), { 'kubernetes.io/metadata.name': namespace }, REFUSAL_MESSAGE);
  return { policy, binding };
}

/** No Job may be added in the namespace (403, exceeded quota), once the quota controller has written its status. */
export function refusalQuota(): object {
  return { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: REFUSAL_QUOTA }, spec: { hard: { 'count/jobs.batch': '0' } } };
}

const armed = new WeakMap<FaultContext, { inForceAt?: number; writesBefore: number[] }>();

/** Puts the refusal in force before the workload's first write (its first runs meet it); a refusal the server does not enforce in time is lifted and skipped. */
export async function armRefusal(ctx: FaultContext, skipped: (why: string) => void): Promise<void> {
  const f = ctx.faults as RefusalFaults;
  const { rest, namespace: ns } = ctx;
  const state: { inForceAt?: number; writesBefore: number[] } = { writesBefore: ctx.replicas.all.map((r) => r.proxy.writes().length) };
  armed.set(ctx, state);
  try {
    const { policy, binding } = refusalPolicy(ns);
    if (f.by !== 'quota') {
      await rest.request('POST', POLICIES, { body: policy });
      await rest.request('POST', BINDINGS, { body: binding });
    }
    if (f.by !== 'policy') await rest.request('POST', quotas(ns), { body: refusalQuota() });
    const enforced = await eventually(
      'the refusal in force',
      async () => (f.by === 'quota' || (await probeRefused(rest, ns))) && (f.by === 'policy' || (await quotaCounted(rest, ns))),
      IN_FORCE_TIMEOUT_MS,
      100,
    ).then(
      () => true,
      () => false,
    );
    if (enforced) state.inForceAt = Date.now();
  } finally {
    if (state.inForceAt === undefined) {
      await lift(ctx);
      skipped(`the server did not enforce the refusal (${f.by}) within ${IN_FORCE_TIMEOUT_MS} ms`);
    }
  }
}

/** Lifts the refusal `windowMs` after the workload's first write; its effects are the replicas' Job creates refused meanwhile. */
export async function playRefusal(ctx: FaultContext, t0: number): Promise<void> {
  const f = ctx.faults as RefusalFaults;
  const state = armed.get(ctx);
  if (state?.inForceAt === undefined) return;
  let reportedBy: string[] = [];
  try {
    await sleep(t0 + f.windowMs - Date.now());
    reportedBy = await reportingRefusal(ctx).catch(() => []);
  } finally {
    await lift(ctx);
  }
  const liftedAt = Date.now();
  ctx.timeline.push({ kind: 'fault', from: state.inForceAt, to: liftedAt, label: `Job creates refused (${f.by})` });
  const writes = ctx.replicas.all.flatMap((r, i) => r.proxy.writes().slice(state.writesBefore[i] ?? 0));
  const effects = { inForceMs: liftedAt - state.inForceAt, refused: refusedCreates(writes), reportedBy };
  ctx.effects.refusal = effects;
  // A status that reported the refusal must stop reporting it once it is lifted.
  if (reportedBy.length) {
    const cleared = await eventually(
      'the refusal gone from every status',
      async () => (await reportingRefusal(ctx)).length === 0,
      STUCK_AFTER_MS,
      250,
    ).then(
      () => true,
      () => false,
    );
    if (!cleared) ctx.effects.refusal = { ...effects, stuck: await reportingRefusal(ctx).catch(() => reportedBy) };
  }
}

/** The Echos whose status conditions name the refusal now. */
async function reportingRefusal(ctx: FaultContext): Promise<string[]> {
  const echos = await ctx.rest.request<{ items?: Echo[] }>('GET', resourcePath(ECHOS, ctx.namespace), { timeoutMs: 5000 });
  return (echos.items ?? []).filter((e) => e.status?.conditions?.some((c) => namesRefusal(c.message))).map((e) => e.metadata.name!);
}

async function probeRefused(rest: RestClient, ns: string): Promise<boolean> {
  try {
    await rest.request('POST', jobs(ns), { body: PROBE_JOB, query: { dryRun: 'All' } });
    return false;
  } catch (err) {
    const code = errorCode(err);
    if (code === 422 || code === 403) return true;
    throw err;
  }
}

async function quotaCounted(rest: RestClient, ns: string): Promise<boolean> {
  const q = await rest.request<{ status?: { hard?: Record<string, string> } }>('GET', `${quotas(ns)}/${REFUSAL_QUOTA}`);
  return q.status?.hard?.['count/jobs.batch'] !== undefined;
}

/** Deletes whatever of the refusal exists. */
async function lift(ctx: FaultContext): Promise<void> {
  const { rest, namespace: ns } = ctx;
  const f = ctx.faults as RefusalFaults;
  const del = async (path: string): Promise<void> => {
    try {
      await rest.request('DELETE', path);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  };
  if (f.by !== 'quota') {
    const name = policyName(ns);
    await del(`${BINDINGS}/${name}`);
    await del(`${POLICIES}/${name}`);
  }
  if (f.by !== 'policy') await del(`${quotas(ns)}/${REFUSAL_QUOTA}`);
}
