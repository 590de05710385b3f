/**
 * `npm run bench -- faults`: the fault campaign (issue 35). Sequentially, on the one private
 * control plane the bench opened (index.ts makes it private for this benchmark):
 *
 *  1. a clean dry run per (program, workload) counts K, the workload's counted writes;
 *  2. the schedules (schedules.ts: every write site for intermediate, the rest shared by the other
 *     classes) are played and judged, each violation printed with its seed and replay command;
 *  3. with --mutants, each mutant (our operator with one bug re-implanted) meets a per-class subset
 *     until a schedule catches it: the mutation score;
 *  4. docs/reliability.md's campaign section and docs/reliability-timeline.svg are rewritten.
 *
 * --replay <id>:<seed> plays that one schedule (for each --programs) and writes no doc.
 */
import { dirname, join } from 'node:path';
import { readState } from '../../testbed/controlplane/cluster.js';
import type { BenchEnv } from '../bench/env.js';
import { isInterrupted } from '../bench/cleanup.js';
import { log } from '../bench/log.js';
import { loadLine, machine, machineLine } from '../bench/report.js';
import { MUTANTS, programs as loadPrograms, type Program } from './programs/programs.js';
import { MUTANT_CLASSES, type MutantName } from './mutants/mutants.js';
import {
  campaignMarkdown,
  effective,
  violationLines,
  writeCampaignDoc,
  TIMELINE_FILE,
  type CampaignResult,
  type MutantRecord,
  type RunRecord,
} from './report.js';
import { serveJobWatchesFromEtcd } from './runner/controlplane.js';
import { effectSummary } from './runner/effects.js';
import { dryRun, runSchedule, type RunnerEnv, type ScheduleOutcome } from './runner/runner.js';
import {
  classApplies,
  makeSchedules,
  scheduleFromSeed,
  workloadsFor,
  type FaultClass,
  type Schedule,
  type WriteCounts,
} from './schedules.js';
import { timelineSvg, type TimelineEvent } from './timeline.js';
import type { CampaignOptions } from './campaign-options.js';

export const DEFAULT_PROGRAMS = ['echoperator', 'controller-runtime-naive', 'controller-runtime-advised'];

/** The bench's control plane, which must be one our scripts started (restarts need its state). */
export function runnerEnv(bench: BenchEnv, programs: Program[]): RunnerEnv {
  const state = bench.clusterDir ? readState(bench.clusterDir) : undefined;
  if (!state || !bench.clusterDir || dirname(bench.kubeconfig) !== bench.clusterDir)
    throw new Error(
      'the fault campaign needs a control plane of its own (its restart class restarts kube-apiserver): unset USE_EXISTING_CLUSTER',
    );
  return { bench, state, programs: new Map(programs.map((p) => [p.name, p])), log };
}

/** Plays one schedule, never throwing: a runner failure becomes the record's error. */
export async function playRecorded(schedule: Schedule, env: RunnerEnv): Promise<RunRecord & { timeline: TimelineEvent[] }> {
  const started = Date.now();
  try {
    const o: ScheduleOutcome = await runSchedule(schedule, env);
    return {
      schedule,
      violations: o.violations,
      durationMs: o.durationMs,
      notes: o.notes,
      effects: o.effects,
      startupExits: o.startupExits,
      timeline: o.timeline,
    };
  } catch (err) {
    return {
      schedule,
      violations: [],
      durationMs: Date.now() - started,
      notes: [],
      error: err instanceof Error ? (err.stack ?? err.message) : String(err),
      timeline: [],
    };
  }
}

/** K per program and workload, from one clean run each. */
export async function countWrites(env: RunnerEnv, programs: Program[]): Promise<WriteCounts> {
  const counts: WriteCounts = {};
  for (const p of programs)
    for (const w of workloadsFor(p)) {
      const o = await dryRun(p.name, w, env);
      (counts[p.name] ??= {})[w] = o.writes;
      log(
        `dry run ${p.name} ${w}: K = ${o.writes} counted writes in ${(o.durationMs / 1000).toFixed(1)} s${o.violations.length ? `; ${o.violations.length} VIOLATION(S) on a clean run: ${o.violations.map((v) => v.invariant).join(', ')}` : ''}`,
      );
    }
  return counts;
}

/** Plays schedules in order, printing progress and each violation with its replay command. */
export async function playAll(
  schedules: Schedule[],
  env: RunnerEnv,
  opts: { stopAtFirstViolation?: boolean } = {},
): Promise<(RunRecord & { timeline: TimelineEvent[] })[]> {
  const out: (RunRecord & { timeline: TimelineEvent[] })[] = [];
  for (const [i, s] of schedules.entries()) {
    if (isInterrupted()) break;
    const r = await playRecorded(s, env);
    out.push(r);
    const verdict = r.error ? `NOT JUDGED: ${r.error.split('\n')[0]}` : r.violations.length ? `${r.violations.length} VIOLATION(S)` : 'ok';
    const effects = r.effects ? `; ${effective(r) ? '' : 'NO EFFECT (not counted): '}${effectSummary(r.effects)}` : '';
    const startup = r.startupExits ? `; ${r.startupExits} start-up exit(s)` : '';
    log(
      `[${i + 1}/${schedules.length}] ${s.program} ${s.id} seed ${s.seed}: ${verdict} (${(r.durationMs / 1000).toFixed(1)} s)${effects}${startup}${r.notes.length ? `; ${r.notes.join('; ')}` : ''}`,
    );
    for (const line of violationLines(r)) log(line);
    if (opts.stopAtFirstViolation && r.violations.length) break;
  }
  return out;
}

/**
 * Each mutant against the whole of its classes (mutants.ts MUTANT_CLASSES, those the run asked
 * for), once per seed, never stopping at a catch: its kill rate is the share of effective
 * schedules that found a violation. `perClass(c)` is how many schedules of class c a seed plays.
 */
export async function scoreMutants(
  env: RunnerEnv,
  mutants: Program[],
  o: Pick<CampaignOptions, 'classes' | 'mutantSeeds'>,
  counts: WriteCounts,
  perClass: (c: FaultClass) => number,
): Promise<MutantRecord[]> {
  const out: MutantRecord[] = [];
  for (const m of mutants) {
    const name = m.name.slice('mutant:'.length) as MutantName;
    const classes = (MUTANT_CLASSES[name] as readonly FaultClass[]).filter((c) => o.classes.includes(c) && classApplies(m, c));
    const runs: RunRecord[] = [];
    for (const seed of o.mutantSeeds) {
      const schedules = classes.flatMap((c) =>
        makeSchedules({ seed, classes: [c], programs: [m], count: perClass(c), writeCounts: counts }),
      );
      runs.push(...(await playAll(schedules, env)));
      if (isInterrupted()) break;
    }
    const counted = runs.filter(effective);
    const killed = counted.filter((r) => r.violations.length);
    const first = killed[0];
    out.push({
      mutant: m.name,
      classes,
      seeds: o.mutantSeeds,
      runs: runs.length,
      effective: counted.length,
      killed: killed.length,
      ...(first ? { caughtBy: { schedule: first.schedule, violation: first.violations[0]! } } : {}),
    });
    log(
      `mutant ${m.name}: killed by ${killed.length} of ${counted.length} effective schedules (${runs.length} run, classes ${classes.join(', ') || 'none asked for'}, seeds ${o.mutantSeeds.join(', ')})`,
    );
  }
  return out;
}

/** The programs asked for; by default ours and the peer, and the Go echoperator when it builds. */
async function resolvePrograms(names: string[] | undefined): Promise<Program[]> {
  if (names) return loadPrograms(names);
  const base = await loadPrograms(DEFAULT_PROGRAMS.filter((n) => n !== 'go-echoperator'));
  try {
    return [...base, ...(await loadPrograms(['go-echoperator']))];
  } catch (err) {
    log(`go-echoperator left out: ${err instanceof Error ? err.message : String(err)}`);
    return base;
  }
}

export async function faultCampaign(bench: BenchEnv, o: CampaignOptions): Promise<CampaignResult | undefined> {
  const started = Date.now();
  const loadStart = loadLine();
  const programs = await resolvePrograms(o.programs);
  const env = runnerEnv(bench, programs);
  await serveJobWatchesFromEtcd(env.state, log);
  if (o.replay) {
    const replay = o.replay;
    await playAll(
      programs.map((p) => scheduleFromSeed(replay.id, replay.seed, p)),
      env,
    );
    return undefined;
  }
  const counts = o.classes.includes('intermediate') ? await countWrites(env, programs) : {};
  // Several programs: the same schedule ids for each, interleaved (each id by each program in turn).
  const matched = programs.length > 1;
  const schedules = makeSchedules({ seed: o.seed, classes: o.classes, programs, count: o.schedules, writeCounts: counts, matched });
  log(
    `${schedules.length} schedules: ${programs.map((p) => `${p.name} ${schedules.filter((s) => s.program === p.name).length}`).join(', ')}`,
  );
  const runs = await playAll(schedules, env);
  let mutants: MutantRecord[] = [];
  if (o.mutants && !isInterrupted()) {
    const mutantPrograms = await loadPrograms(MUTANTS.map((m) => `mutant:${m}`));
    for (const m of mutantPrograms) env.programs.set(m.name, m);
    // A mutant's clean run is ours (its bug shows under faults only), so ours' K serves when measured.
    const ours = counts.echoperator;
    const mutantCounts: WriteCounts =
      ours || !o.classes.includes('intermediate')
        ? Object.fromEntries(mutantPrograms.map((m) => [m.name, ours ?? {}]))
        : await countWrites(env, mutantPrograms);
    // The whole class: as many schedules of it as ours met in the run (or --mutant-schedules).
    const wholeClass = (c: FaultClass): number =>
      o.mutantSchedulesPerClass ?? schedules.filter((s) => s.program === programs[0]!.name && s.class === c).length;
    mutants = await scoreMutants(env, mutantPrograms, o, mutantCounts, wholeClass);
  }
  const result: CampaignResult = {
    seed: o.seed,
    command: `npm run bench -- faults --schedules ${o.schedules} --seed ${o.seed} --programs ${programs.map((p) => p.name).join(',')} --classes ${o.classes.join(',')}${o.mutants ? ` --mutants --mutant-seeds ${o.mutantSeeds.join(',')}${o.mutantSchedulesPerClass ? ` --mutant-schedules ${o.mutantSchedulesPerClass}` : ''}` : ''}`,
    programs: programs.map((p) => p.name),
    classes: o.classes,
    notApplicable: programs.flatMap((p) => o.classes.filter((c) => !classApplies(p, c)).map((c) => ({ program: p.name, class: c }))),
    ...(matched
      ? {
          matched: {
            ids: new Set(schedules.map((s) => s.id)).size,
            workloads: [...new Set(schedules.map((s) => s.workload))],
          },
        }
      : {}),
    runs,
    mutants,
    date: new Date(started).toISOString().replace(/\.\d+Z$/, 'Z'),
    machine: machineLine(machine(bench)),
    loadStart,
    loadEnd: loadLine(),
    durationMs: Date.now() - started,
  };
  if (o.docs) {
    const shown = pickTimeline(runs);
    const caption =
      shown &&
      `The timeline of ${shown.schedule.program}'s schedule \`${shown.schedule.id}\` (seed ${shown.schedule.seed}): one lane per replica; bars are lease terms (from the audit log), ticks its counted writes (from its proxy), shaded spans the faults.`;
    writeCampaignDoc(
      o.docs,
      campaignMarkdown(result, caption),
      shown && timelineSvg(`${shown.schedule.program} ${shown.schedule.id} (seed ${shown.schedule.seed})`, shown.timeline),
    );
    log(`${o.docs} and ${join(dirname(o.docs), TIMELINE_FILE)} updated`);
  }
  return result;
}

/** The schedule the doc's chart shows: ours, a takeover (partition, else stale) if there is one. */
function pickTimeline(runs: (RunRecord & { timeline: TimelineEvent[] })[]): (RunRecord & { timeline: TimelineEvent[] }) | undefined {
  const judged = runs.filter((r) => !r.error && r.timeline.length);
  for (const c of ['partition', 'stale', 'intermediate'] as FaultClass[]) {
    const r = judged.find((x) => x.schedule.class === c && x.schedule.program === 'echoperator');
    if (r) return r;
  }
  return judged[0];
}
