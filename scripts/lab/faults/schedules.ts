/**
 * Fault schedules: pure values made from a seed, so a campaign is reproducible and any one schedule
 * is replayable from `<id>:<seed>` alone (`npm run bench -- faults --replay <id>:<seed>`).
 *
 * A schedule's id names what is not drawn from its seed: `<class>.<workload>.<n>`, where n is the
 * index among that class's schedules for that workload, except for `intermediate`, where n is k
 * (kill after the k-th counted write). Its seed derives from the campaign's seed and the id only,
 * never from the program, so every program meets the same faults ("side by side").
 *
 * Guarantees: makeSchedules() is a function of its arguments; `intermediate` covers every write
 * site (each k in 1..K of every workload, K measured by a clean dry run) whenever `count` leaves
 * room for them, and otherwise spreads its share evenly over them; classes a program cannot take
 * (leader election absent) or workloads naming a kind it lacks yield no schedules.
 */
import type { FaultClass } from './programs/types.js';
import { WORKLOADS, type FirstFaults, type Kind, type ProgramTraits, type WorkloadName } from './vocabulary.js';

import { ambiguousFaults, type AmbiguousFaults } from './classes/ambiguous.js';
import { lateFaults, type LateFaults } from './classes/late.js';
import { refusalFaults, type RefusalFaults } from './classes/refusal.js';
import { deriveSeed, intBetween, mulberry32, pick } from './random.js';
import { recreateFaults, type RecreateFaults } from './classes/recreate.js';
import { ttlFaults, type TtlFaults } from './classes/ttl.js';
import { staleApiserverFaults, type StaleApiserverFaults } from './classes/stale-apiserver.js';
import { generatedFaults, generatedSeedName, widestWorkload, type GeneratedFaults } from './generated/sequence.js';

export { WORKLOADS, type FirstFaults, type Kind, type ProgramTraits, type WorkloadName };

export type { FaultClass };
export const FAULT_CLASSES: readonly FaultClass[] = [
  'intermediate',
  'stale',
  'unobserved',
  'restart',
  'partition',
  'overload',
  'late',
  'ambiguous',
  'refusal',
  'recreate',
  'ttl',
  'stale-apiserver',
  'generated',
];
/** Classes that need two replicas contending for a Lease. */
export const HA_CLASSES: readonly FaultClass[] = ['stale', 'partition', 'late', 'recreate', 'stale-apiserver'];
/**
 * Classes that use only the workloads with Echos: their faults aim at Echo runs (Job creates, Echo
 * status), or act on an Echo of their own (classes/).
 */
export const ECHO_CLASSES: readonly FaultClass[] = ['late', 'ambiguous', 'refusal', 'recreate', 'ttl'];

/** What a program makes for each kind. */
const OWNED = { Echo: 'Job', ScheduledEcho: 'CronJob' } as const;
export const WORKLOAD_NAMES = Object.keys(WORKLOADS) as WorkloadName[];

/**
 * The resync period the campaign gives a program that has one (RESYNC_PERIOD_SECONDS), in seconds:
 * short, so that a schedule of a few seconds sees it fire, and the stale class can hold watches
 * back for less and for more than it. (The API server's bookmark period is fixed at one minute.)
 */
export const CAMPAIGN_RESYNC_S = 2;
/** Watch delays of the stale class, ms: below and above CAMPAIGN_RESYNC_S. */
export const STALE_DELAYS_MS = { below: [500, 1000, 1500], above: [3000, 4500, 6000] } as const;
/**
 * Delays of the Echo watches alone (the Job watches current): longer than the takeover after the
 * leader dies (a lease duration and a retry), so the new leader meets Jobs whose Echos it does not
 * know as they are yet.
 */
export const STALE_ECHO_DELAYS_MS = [6000, 7000, 8000] as const;

/** Times are ms after the workload's first write. */
export type Faults =
  FirstFaults | LateFaults | AmbiguousFaults | RefusalFaults | RecreateFaults | TtlFaults | StaleApiserverFaults | GeneratedFaults;

export interface Schedule {
  id: string;
  seed: number;
  program: string;
  class: FaultClass;
  workload: WorkloadName;
  faults: Faults;
}

/** Counted writes of a clean run, per program and workload (from the dry runs). */
export type WriteCounts = Record<string, Partial<Record<WorkloadName, number>>>;

export interface MakeSchedulesOptions {
  seed: number;
  classes: readonly FaultClass[];
  programs: readonly ProgramTraits[];
  /** Schedules per program (before the classes and workloads a program cannot take are left out). */
  count: number;
  writeCounts?: WriteCounts;
  /**
   * The same schedule ids for every program, interleaved (each id by each program in turn): the
   * workloads and classes all of them take, faults drawn from their joint traits (jointTraits).
   */
  matched?: boolean;
}

export function workloadsFor(program: ProgramTraits, c?: FaultClass): WorkloadName[] {
  return WORKLOAD_NAMES.filter(
    (w) =>
      WORKLOADS[w].every((k) => program.kinds.includes(k)) &&
      (c === undefined || !ECHO_CLASSES.includes(c) || (WORKLOADS[w] as readonly Kind[]).includes('Echo')),
  );
}

export function classApplies(program: ProgramTraits, c: FaultClass): boolean {
  return !HA_CLASSES.includes(c) || program.leaderElection;
}

export function makeSchedules(o: MakeSchedulesOptions): Schedule[] {
  if (o.matched && o.programs.length > 1) return matchedSchedules(o);
  return o.programs.flatMap((p) => schedulesOf(p, o));
}

/**
 * The traits every program shares: the kinds all handle, leader election only when all have it,
 * the longest lease (a partition must outlast every program's), and per workload the largest K
 * (an intermediate k beyond a program's own K kills nothing there: no effect, not counted).
 */
export function jointTraits(
  programs: readonly ProgramTraits[],
  counts: WriteCounts | undefined,
): { traits: ProgramTraits; counts: WriteCounts } {
  const name = programs.map((p) => p.name).join('+');
  const kinds = (['Echo', 'ScheduledEcho'] as const).filter((k) => programs.every((p) => p.kinds.includes(k)));
  const leases = programs.flatMap((p) => (p.lease ? [p.lease] : []));
  const lease = leases.reduce<ProgramTraits['lease']>(
    (a, b) => (!a || b.durationS + 2 * b.retryS > a.durationS + 2 * a.retryS ? b : a),
    undefined,
  );
  const joint: Partial<Record<WorkloadName, number>> = {};
  for (const w of WORKLOAD_NAMES) {
    const ks = programs.map((p) => counts?.[p.name]?.[w]).filter((k): k is number => k !== undefined);
    if (ks.length === programs.length) joint[w] = Math.max(...ks);
  }
  return {
    traits: { name, kinds, leaderElection: programs.every((p) => p.leaderElection), ...(lease ? { lease } : {}) },
    counts: { [name]: joint },
  };
}

/** The same schedule ids for every program, interleaved: each id played by each program in turn. */
function matchedSchedules(o: MakeSchedulesOptions): Schedule[] {
  const { traits, counts } = jointTraits(o.programs, o.writeCounts);
  return schedulesOf(traits, { ...o, writeCounts: counts }).flatMap((s) => o.programs.map((p) => ({ ...s, program: p.name })));
}

function schedulesOf(program: ProgramTraits, o: MakeSchedulesOptions): Schedule[] {
  const workloads = workloadsFor(program);
  const classes = o.classes.filter((c) => classApplies(program, c));
  if (!workloads.length || !classes.length) return [];
  const sites = classes.includes('intermediate') ? writeSites(program, workloads, o.writeCounts) : [];
  const quota = quotas(classes, o.count, sites.length);
  const out: Schedule[] = [];
  for (const c of classes) {
    const q = quota.get(c) ?? 0;
    for (let i = 0; i < q; i++) {
      if (c === 'intermediate') {
        const site = sites[Math.floor((i * sites.length) / q)]!;
        out.push(makeSchedule(`intermediate.${site.workload}.${site.k}`, o.seed, program));
      } else if (c === 'generated') {
        // One workload, the program's widest: its kinds decide which operations a sequence draws.
        out.push(makeSchedule(`generated.${widestWorkload(workloads)}.${i}`, o.seed, program));
      } else {
        const own = workloadsFor(program, c);
        const workload = own[i % own.length];
        if (workload) out.push(makeSchedule(`${c}.${workload}.${Math.floor(i / own.length)}`, o.seed, program));
      }
    }
  }
  return out;
}

/** Every (workload, k): the k-th counted write of that workload's clean run. */
function writeSites(
  program: ProgramTraits,
  workloads: WorkloadName[],
  counts: WriteCounts | undefined,
): { workload: WorkloadName; k: number }[] {
  return workloads.flatMap((workload) => {
    const k = counts?.[program.name]?.[workload];
    if (k === undefined) throw new Error(`no write count for ${program.name} ${workload}: the intermediate class needs its dry run first`);
    return Array.from({ length: k }, (_, i) => ({ workload, k: i + 1 }));
  });
}

/**
 * Schedules per class: intermediate takes every write site when count leaves at least one
 * schedule for every other class, the others share the rest evenly (the first ones get the
 * remainder); else every class gets an even share.
 */
function quotas(classes: readonly FaultClass[], count: number, sites: number): Map<FaultClass, number> {
  const out = new Map<FaultClass, number>();
  const others = classes.filter((c) => c !== 'intermediate');
  const full = classes.includes('intermediate') && count >= sites + others.length;
  const shared = full ? others : classes;
  const total = full ? count - sites : count;
  if (full) out.set('intermediate', sites);
  shared.forEach((c, i) => out.set(c, Math.floor(total / shared.length) + (i < total % shared.length ? 1 : 0)));
  if (!full && out.has('intermediate')) out.set('intermediate', Math.min(out.get('intermediate')!, sites));
  return out;
}

/** The campaign's schedule seed for an id: what a violation prints, and what --replay takes. */
export function scheduleSeed(campaignSeed: number, id: string): number {
  return deriveSeed(campaignSeed, generatedSeedName(id));
}

/** The schedule of `id` in the campaign of `campaignSeed`. */
export function makeSchedule(id: string, campaignSeed: number, program: ProgramTraits): Schedule {
  return scheduleFromSeed(id, scheduleSeed(campaignSeed, id), program);
}

/** The schedule of `id` drawn from its own seed (a replay). */
export function scheduleFromSeed(id: string, seed: number, program: ProgramTraits): Schedule {
  const { cls, workload, n } = parseId(id);
  if (!classApplies(program, cls)) throw new Error(`${program.name} has no leader election: the ${cls} class does not apply to it`);
  if (!workloadsFor(program).includes(workload)) throw new Error(`${program.name} lacks a kind that workload ${workload} uses`);
  if (!workloadsFor(program, cls).includes(workload))
    throw new Error(`the ${cls} class aims at Echo runs or acts on an Echo: workload ${workload} has none`);
  return { id, seed, program: program.name, class: cls, workload, faults: faultsFor(cls, workload, n, mulberry32(seed), program) };
}

export function parseId(id: string): { cls: FaultClass; workload: WorkloadName; n: number } {
  const m = /^([a-z-]+)\.([a-z-]+)\.(\d+)$/.exec(id);
  const cls = m?.[1] as FaultClass | undefined;
  const workload = m?.[2] as WorkloadName | undefined;
  if (!m || !cls || !FAULT_CLASSES.includes(cls) || !workload || !WORKLOAD_NAMES.includes(workload))
    throw new Error(
      `bad schedule id ${JSON.stringify(id)}: expected <class>.<workload>.<n>, class one of ${FAULT_CLASSES.join(', ')}, workload one of ${WORKLOAD_NAMES.join(', ')}`,
    );
  const n = Number(m[3]);
  if (cls === 'intermediate' && n < 1) throw new Error(`bad schedule id ${JSON.stringify(id)}: k counts from 1`);
  return { cls, workload, n };
}

/** `<id>:<seed>`, as a violation prints it. */
export function parseReplay(s: string): { id: string; seed: number } {
  const at = s.lastIndexOf(':');
  const seed = Number(s.slice(at + 1));
  if (at < 1 || !Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new Error(`--replay must be <id>:<seed> (seed an integer from 0 to 4294967295), got ${JSON.stringify(s)}`);
  parseId(s.slice(0, at));
  return { id: s.slice(0, at), seed };
}

function faultsFor(cls: FaultClass, workload: WorkloadName, n: number, random: () => number, program: ProgramTraits): Faults {
  switch (cls) {
    case 'generated':
      return generatedFaults(WORKLOADS[workload], random, program, (c, r) => faultsFor(c, workload, n, r, program) as FirstFaults);
    case 'intermediate':
      return { class: cls, killAfterWrite: n };
    case 'stale': {
      // The Echo-only lag needs a run that finishes before the leader dies: a workload with Echos.
      if ((WORKLOADS[workload] as readonly Kind[]).includes('Echo') && random() < 0.5)
        return {
          class: cls,
          lagging: 'echos',
          watchDelayMs: pick(random, STALE_ECHO_DELAYS_MS),
          relativeToResync: 'above',
          killLeaderAtMs: intBetween(random, 0, 500),
        };
      const relativeToResync = random() < 0.5 ? 'below' : 'above';
      return {
        class: cls,
        lagging: 'objects',
        watchDelayMs: pick(random, STALE_DELAYS_MS[relativeToResync]),
        relativeToResync,
        killLeaderAtMs: intBetween(random, 100, 1500),
      };
    }
    case 'unobserved': {
      const mode = random() < 0.5 ? 'drop' : 'merge';
      // A kind the workload makes (or one its objects own), or any.
      const dropKind = pick(random, [...WORKLOADS[workload].flatMap((k) => [k, OWNED[k]]), undefined]);
      return {
        class: cls,
        mode,
        drop: mode === 'drop' ? intBetween(random, 1, 3) : 0,
        ...(mode === 'drop' && dropKind ? { dropKind } : {}),
        mergeMs: mode === 'merge' ? intBetween(random, 200, 1500) : 0,
        expireAtMs: intBetween(random, 300, 2500),
        expireNextWatches: intBetween(random, 0, 2),
      };
    }
    case 'restart': {
      const variant = pick(random, ['apiserver', 'compact', 'both'] as const);
      return { class: cls, compact: variant !== 'apiserver', restartApiserver: variant !== 'compact', atMs: intBetween(random, 0, 1500) };
    }
    case 'partition': {
      // Long enough that the standby takes the Lease: a whole lease duration, plus its retry.
      const lease = program.lease ?? { durationS: 15, renewS: 10, retryS: 2 };
      return {
        class: cls,
        atMs: intBetween(random, 0, 1500),
        silenceMs: Math.round((lease.durationS + 2 * lease.retryS) * 1000) + intBetween(random, 500, 3000),
      };
    }
    case 'overload':
      return {
        class: cls,
        status: random() < 0.5 ? 429 : 503,
        retryAfterS: intBetween(random, 1, 2),
        atMs: intBetween(random, 0, 1000),
        ms: intBetween(random, 1000, 3000),
        fraction: Math.round((0.3 + random() * 0.6) * 100) / 100,
      };
    case 'late':
      return lateFaults(random);
    case 'ambiguous':
      return ambiguousFaults(random);
    case 'refusal':
      return refusalFaults(random);
    case 'recreate':
      return recreateFaults(random, program);
    case 'ttl':
      return ttlFaults(random);
    case 'stale-apiserver':
      return staleApiserverFaults(random);
  }
}
