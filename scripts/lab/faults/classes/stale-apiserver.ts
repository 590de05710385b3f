/**
 * The stale-apiserver class (Sieve's "time travel"): the standby reaches a second kube-apiserver
 * over the same etcd (runner/second-apiserver.ts) whose view lags: from the workload's start, etcd's
 * answers reach that API server lagMs late, so its watch cache, the LISTs and watches it serves
 * and its GETs show the cluster as it was lagMs ago. The leader (on the first API server) is
 * SIGKILLed at killLeaderAtMs; the standby takes the Lease (its Leases go straight to etcd, so it
 * leads on time) and acts from the lagging view; its writes land in the real etcd, late too. The
 * lag ends once the standby has led for as long as it (and a second): the API server catches up.
 * In half the schedules the standby asks the lagging server for its Echo requests alone, and the
 * current one for the rest (reads: 'echos'): its Echo and Job views out of step, as a client
 * whose HTTP/1.1 connections (ours are) a load balancer spreads over API servers may find them.
 *
 * Why not a lagging etcd member: a learner serves no writes nor linearizable reads (a
 * kube-apiserver on it cannot start), and a second voting member makes a two-member cluster
 * whose quorum needs both (pausing it stops every write). A third member would do, at the cost
 * of two more etcd processes and a membership change per run on a 2-core machine; a link that
 * delays etcd's answers to the second API server gives its clients the same view (late watch
 * events, cache-served LISTs behind, quorum reads answered as of the lag ago, writes that land),
 * with nothing to change in the campaign's etcd.
 *
 * Effect: how far behind the second API server's view was while the standby led from it: the
 * revisions between its cache-served LIST of the namespace's Echos and Jobs (the Echos alone
 * when only those come from it; resourceVersion=0,
 * as an informer lists) and a consistent LIST from the first, and how many objects differed,
 * sampled from the takeover for as long as the lag.
 */
import type { V1Job } from '@kubernetes/client-node';
import type { Echo } from '../../../../src/api/echo.js';
import { ECHOS } from '../../../../src/api/echo.js';
import { JOBS, loadKubeConfig, resourcePath, RestClient, type ResourceType } from '../../../../src/kube/index.js';
import type { ControlPlaneState } from '../../../testbed/controlplane/cluster.js';
import { sleep } from '../../bench/log.js';
import { intBetween, pick } from '../random.js';
import type { FaultRun } from '../runner/context.js';
import type { ReplicaUpstream } from '../runner/replicas.js';
import { startSecondApiserver, type SecondApiserver } from '../runner/second-apiserver.js';
import { skipped } from './target.js';

/** The schedule being played, as this class's code sees it. */
type FaultContext = FaultRun<{ staleApiserver?: StaleApiserverEffect }>;

/**
 * The lags, ms. With every request lagging, short: each write of the standby takes the lag too.
 * With its Echo requests alone, longer than a takeover (a lease duration and a retry, as the
 * stale class's Echo-only lag): else the new leader's view is current for everything the old
 * leader wrote before it died, and there is nothing stale to act on.
 */
export const STALE_APISERVER_LAGS_MS = { all: [1500, 3000, 4500], echos: [6000, 7000, 8000] } as const;
const TAKEOVER_TIMEOUT_MS = 30_000;
const SAMPLE_MS = 250;

export interface StaleApiserverFaults {
  class: 'stale-apiserver';
  /**
   * What the standby asks the lagging API server: everything, or its Echo requests alone (the
   * rest going to the current one: its Echo and Job views out of step, as a client whose
   * HTTP/1.1 connections a load balancer spreads over API servers may find them).
   */
  reads: 'all' | 'echos';
  lagMs: number;
  /** ms after the workload's first write. */
  killLeaderAtMs: number;
}

export function staleApiserverFaults(random: () => number): StaleApiserverFaults {
  const reads = random() < 0.5 ? 'all' : 'echos';
  return {
    class: 'stale-apiserver',
    reads,
    lagMs: pick(random, STALE_APISERVER_LAGS_MS[reads]),
    killLeaderAtMs: intBetween(random, 500, 2500),
  };
}

export interface StaleApiserverEffect {
  /** The largest gap, in etcd revisions, between the two API servers' LISTs while the standby led. */
  behindRevisions: number;
  /** The most objects (Echos and Jobs of the namespace) that differed in one sample. */
  objectsDiffering: number;
  samples: number;
}

export function staleApiserverHadEffect(e: StaleApiserverEffect | undefined): boolean {
  return e !== undefined && e.objectsDiffering > 0;
}

export function staleApiserverSummary(e: StaleApiserverEffect): string {
  return `the second kube-apiserver up to ${e.behindRevisions} revision(s) and ${e.objectsDiffering} object(s) behind while the standby led (${e.samples} samples)`;
}

/** The standby's Echo requests (of the Echos and their status). */
export const ECHO_REQUESTS = /\/echos(\/|$)/;

/** What the standby reaches the second API server for. */
export function standbyUpstream(f: StaleApiserverFaults, second: Pick<SecondApiserver, 'kubeconfig'>): ReplicaUpstream {
  return { kubeconfig: second.kubeconfig, ...(f.reads === 'echos' ? { only: ECHO_REQUESTS } : {}) };
}

/** The second API server the standby is to reach, started before the replicas. */
export async function prepareStaleApiserver(state: ControlPlaneState, log: (line: string) => void): Promise<SecondApiserver> {
  return startSecondApiserver(state, log);
}

interface Listing {
  revision: number;
  objects: Map<string, string>;
}

/** The namespace's Echos and Jobs as one API server lists them: uid -> resourceVersion, and the list's revision. */
async function listing(rest: RestClient, namespace: string, fromCache: boolean, types: readonly ResourceType[]): Promise<Listing> {
  const objects = new Map<string, string>();
  let revision = 0;
  for (const type of types) {
    const list = await rest.request<{ metadata?: { resourceVersion?: string }; items?: (Echo | V1Job)[] }>(
      'GET',
      resourcePath(type, namespace),
      { query: fromCache ? { resourceVersion: '0' } : {}, timeoutMs: 15_000 },
    );
    revision = Math.max(revision, Number(list.metadata?.resourceVersion ?? 0));
    for (const o of list.items ?? []) objects.set(o.metadata!.uid!, o.metadata!.resourceVersion!);
  }
  return { revision, objects };
}

/** Objects in one listing and not the other, or at another resourceVersion. */
export function differing(a: ReadonlyMap<string, string>, b: ReadonlyMap<string, string>): number {
  let n = 0;
  for (const [uid, rv] of a) if (b.get(uid) !== rv) n++;
  for (const uid of b.keys()) if (!a.has(uid)) n++;
  return n;
}

export async function playStaleApiserver(ctx: FaultContext, f: StaleApiserverFaults, second: SecondApiserver, t0: number): Promise<void> {
  const standby = ctx.replicas.all[1];
  if (!standby) return skipped(ctx, 'no standby');
  second.link.setLagMs(f.lagMs);
  const lagFrom = Date.now();
  try {
    await sleep(t0 + f.killLeaderAtMs - Date.now());
    const leader = ctx.replicas.leader();
    if (!leader || leader.exit || leader === standby) return skipped(ctx, 'no running leader to kill (or the standby leads already)');
    ctx.replicas.kill(leader, 'SIGKILL');
    ctx.timeline.push({ kind: 'fault', replica: leader.name, from: Date.now(), to: Date.now(), label: 'SIGKILL' });
    if (!(await ctx.replicas.holdsLease(standby, TAKEOVER_TIMEOUT_MS)))
      return skipped(ctx, `${standby.name} did not take the Lease within ${TAKEOVER_TIMEOUT_MS} ms`);
    const from = Date.now();
    // What the standby reads from the lagging server: the Echos and Jobs, or the Echos alone.
    ctx.effects.staleApiserver = await sampleLag(ctx, second, f.lagMs + 1000, f.reads === 'echos' ? [ECHOS] : [ECHOS, JOBS]);
    ctx.timeline.push({ kind: 'fault', replica: standby.name, from, to: Date.now(), label: 'leads from a lagging kube-apiserver' });
  } finally {
    // Caught up from here (what the link holds still comes in order): the schedule judges what
    // the standby did from the lagging view, not a lag that never ends.
    second.link.setLagMs(0);
    ctx.timeline.push({
      kind: 'fault',
      replica: standby.name,
      from: lagFrom,
      to: Date.now(),
      label: `its kube-apiserver ${f.lagMs} ms behind`,
    });
  }
}

/** For `ms`: how far the second API server's cache-served LISTs trail consistent ones from the first. */
async function sampleLag(
  ctx: FaultContext,
  second: SecondApiserver,
  ms: number,
  types: readonly ResourceType[],
): Promise<StaleApiserverEffect> {
  const stale = new RestClient(loadKubeConfig(second.kubeconfig), { userAgent: 'echoperator-faults-judge' });
  const effect: StaleApiserverEffect = { behindRevisions: 0, objectsDiffering: 0, samples: 0 };
  const from = Date.now();
  try {
    while (Date.now() - from < ms) {
      try {
        // The cache-served LIST first: the consistent one, read after it, can only be newer.
        const behind = await listing(stale, ctx.namespace, true, types);
        const current = await listing(ctx.rest, ctx.namespace, false, types);
        effect.samples++;
        effect.behindRevisions = Math.max(effect.behindRevisions, current.revision - behind.revision);
        effect.objectsDiffering = Math.max(effect.objectsDiffering, differing(current.objects, behind.objects));
      } catch {
        // a slow answer: the next sample
      }
      await sleep(SAMPLE_MS);
    }
  } finally {
    stale.close();
  }
  return effect;
}
