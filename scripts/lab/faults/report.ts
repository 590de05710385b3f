/**
 * The campaign's results as docs/reliability.md's "Fault campaign" section (between the markers
 * scripts/lab/bench/report.ts's updateDoc owns, so a rerun replaces it and nothing else) and the
 * timeline chart beside it. Pure: campaignMarkdown() is a function of the results.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { updateDoc } from '../bench/report.js';
import { boundText } from './bound.js';
import { sequenceLines } from './generated/sequence.js';
import type { Violation } from './judge/invariants.js';
import { effectSummary, hadEffect, type ScheduleEffects } from './runner/effects.js';
import type { FaultClass, Schedule } from './schedules.js';

export const TIMELINE_FILE = 'reliability-timeline.svg';

export interface RunRecord {
  schedule: Schedule;
  violations: Violation[];
  durationMs: number;
  notes: string[];
  /** What the faults did; absent when the runner failed. */
  effects?: ScheduleEffects;
  /** Replicas that exited before they were ready (the report's own column, not violations). */
  startupExits?: number;
  /** The runner failed (not the program): the schedule is not judged. */
  error?: string;
}

/** Judged, and its faults reached the program: the schedules a rate counts. */
export function effective(r: RunRecord): boolean {
  const f = r.schedule.faults;
  return !r.error && r.effects !== undefined && hadEffect(f.class === 'generated' ? (f.fault?.class ?? f.class) : f.class, r.effects);
}

export interface MutantRecord {
  mutant: string;
  /** The classes it was played against (all their schedules), and the seeds. */
  classes: FaultClass[];
  seeds: number[];
  runs: number;
  /** Judged schedules whose faults had an effect, and those of them that found a violation. */
  effective: number;
  killed: number;
  /** The first schedule that caught it. */
  caughtBy?: { schedule: Schedule; violation: Violation };
}

export interface CampaignResult {
  seed: number;
  /** The command that reruns this campaign. */
  command: string;
  programs: string[];
  /** Classes asked for; a program without leader election shows n/a for the HA ones. */
  classes: FaultClass[];
  notApplicable: { program: string; class: FaultClass }[];
  /** Several programs: the same schedule ids for each, interleaved, on the workloads all of them handle. */
  matched?: { ids: number; workloads: string[] };
  runs: RunRecord[];
  mutants: MutantRecord[];
  date: string;
  machine: string;
  loadStart: string;
  loadEnd: string;
  durationMs: number;
}

export function replayCommand(s: Schedule): string {
  return `npm run bench -- faults --replay ${s.id}:${s.seed} --programs ${s.program}`;
}

/** One line per violation, with the seed and the exact replay command. */
export function violationLines(r: RunRecord): string[] {
  return [
    ...r.violations.map(
      (v) =>
        `${r.schedule.program} ${r.schedule.id} (seed ${r.schedule.seed}): ${v.invariant}: ${v.detail}\n  replay: ${replayCommand(r.schedule)}`,
    ),
    ...(r.violations.length ? sequenceLines(r.schedule.faults) : []),
  ];
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2 : NaN;
};
const secs = (ms: number): string => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : '-');

export function campaignMarkdown(r: CampaignResult, timelineCaption: string | undefined): string {
  const head = [
    'class',
    ...r.programs.flatMap((p) => [`${p}: effective (of run)`, `${p}: violations`, `${p}: 95 % bound`, `${p}: start-up exits`]),
    `s per schedule (${r.programs[0]}, median)`,
  ];
  const cellsOf = (runs: RunRecord[]): string[] => {
    const judged = runs.filter((x) => !x.error);
    const counted = judged.filter(effective);
    const errors = runs.length - judged.length;
    const bad = counted.filter((x) => x.violations.length).length;
    return [
      `${counted.length} (of ${judged.length}${errors ? `, +${errors} not judged` : ''})`,
      bad ? `**${bad}**` : '0',
      boundText(bad, counted.length),
      String(judged.filter((x) => x.startupExits).length),
    ];
  };
  const rows = r.classes.map((c) => {
    const cells = r.programs.flatMap((p) => {
      if (r.notApplicable.some((n) => n.program === p && n.class === c)) return ['n/a', 'n/a', 'n/a', 'n/a'];
      return cellsOf(r.runs.filter((x) => x.schedule.program === p && x.schedule.class === c));
    });
    const ours = r.runs.filter((x) => x.schedule.program === r.programs[0] && x.schedule.class === c && !x.error);
    return [c, ...cells, secs(median(ours.map((x) => x.durationMs)))];
  });
  rows.push([
    '**all**',
    ...r.programs.flatMap((p) => cellsOf(r.runs.filter((x) => x.schedule.program === p))),
    secs(median(r.runs.filter((x) => !x.error).map((x) => x.durationMs))),
  ]);
  const table = (h: string[], body: string[][]): string =>
    [h, h.map(() => '---'), ...body].map((row) => `| ${row.join(' | ')} |`).join('\n');
  const out = [
    '## Fault campaign',
    '',
    `Run ${r.date} on ${r.machine}; the control plane (etcd, kube-apiserver, kube-controller-manager) runs on the same machine, private to the campaign.`,
    `Campaign seed ${r.seed}; ${r.runs.length} schedules in ${secs(r.durationMs)}. Load average (1/5/15 min) at the start: ${r.loadStart}; at the end: ${r.loadEnd}.`,
    `Command: \`${r.command}\` (\`npm run bench -- --help\` lists the options).`,
    ...(r.matched
      ? [
          `Matched: the same ${r.matched.ids} schedule ids for every program, interleaved (each id played by each program in turn) in this one run, on the workloads all of them handle (${r.matched.workloads.join(', ')}).`,
        ]
      : []),
    '',
    'Per class and program: the schedules whose faults reached the program (effective; a schedule whose faults had no effect tested nothing and is left out, see the effects below), those with at least one invariant violation among them, the one-sided 95 % upper bound on the rate of such schedules (Clopper-Pearson; 0 of n gives 1 - 0.05^(1/n), about 3/n), and the schedules where a replica exited at start-up (before it was ready; restarted with the back-off of a kubelet, and not a violation). n/a: the class needs leader election, which the program lacks.',
    '',
    table(head, rows),
  ];
  const idle = r.runs.filter((x) => !x.error && !effective(x));
  const idleBad = idle.filter((x) => x.violations.length);
  if (idleBad.length)
    out.push(
      '',
      `Violations in schedules whose faults had no effect (not in the rates above, listed below): ${idleBad.map((x) => `${x.schedule.program} \`${x.schedule.id}\``).join(', ')}.`,
    );
  const noted = r.runs.filter((x) => x.notes.length);
  if (noted.length) {
    out.push('', 'Runner notes (faults skipped, gates the program missed):', '');
    for (const x of noted.slice(0, 60)) out.push(`- ${x.schedule.program} \`${x.schedule.id}\`: ${x.notes.join('; ')}`);
    if (noted.length > 60) out.push(`- ... and ${noted.length - 60} more schedules`);
  }
  const bad = r.runs.filter((x) => x.violations.length);
  if (bad.length) {
    out.push('', 'Violations (each with its replay command):', '');
    for (const x of bad.slice(0, 40))
      for (const v of x.violations)
        out.push(
          `- ${x.schedule.program} \`${x.schedule.id}\` seed ${x.schedule.seed}: **${v.invariant}**: ${v.detail.slice(0, 400)} (\`${replayCommand(x.schedule)}\`)`,
        );
    if (bad.length > 40) out.push(`- ... and ${bad.length - 40} more schedules`);
  }
  const errors = r.runs.filter((x) => x.error);
  if (errors.length) {
    out.push('', 'Schedules the runner could not judge:', '');
    for (const x of errors.slice(0, 20))
      out.push(`- ${x.schedule.program} \`${x.schedule.id}\` seed ${x.schedule.seed}: ${x.error!.split('\n')[0]!.slice(0, 300)}`);
  }
  if (r.mutants.length) {
    const caught = r.mutants.filter((m) => m.killed > 0).length;
    out.push(
      '',
      `Mutants: **${caught} of ${r.mutants.length}** killed at least once. Each is our operator with one bug re-implanted (scripts/lab/faults/mutants/), played against every schedule of the classes meant to find it, with each seed; its kill rate is the share of effective schedules that found a violation (the bound is the 95 % upper bound on the rate at which it escapes):`,
      '',
    );
    out.push(
      table(
        ['mutant', 'classes', 'seeds', 'killed / effective', 'kill rate', 'escape rate, 95 % bound', 'first caught by', 'invariant'],
        r.mutants.map((m) => [
          m.mutant,
          m.classes.join(', ') || '-',
          m.seeds.join(', '),
          `${m.killed} / ${m.effective}${m.runs > m.effective ? ` (of ${m.runs} run)` : ''}`,
          m.effective ? `${((100 * m.killed) / m.effective).toFixed(0)} %` : '-',
          boundText(m.effective - m.killed, m.effective),
          m.caughtBy ? `\`${m.caughtBy.schedule.id}\` seed ${m.caughtBy.schedule.seed}` : '**never**',
          m.caughtBy ? m.caughtBy.violation.invariant : '-',
        ]),
      ),
    );
  }
  out.push('', ...effectsBlock(r.runs));
  if (timelineCaption) out.push('', `![one schedule's timeline](${TIMELINE_FILE})`, '', timelineCaption);
  return out.join('\n');
}

/** Every schedule's fault effects, one line each, folded. */
export function effectsBlock(runs: readonly RunRecord[]): string[] {
  const idle = runs.filter((x) => !x.error && !effective(x)).length;
  return [
    '<details>',
    `<summary>What each schedule's faults did (${runs.length} schedules; ${idle} without effect)</summary>`,
    '',
    ...runs.map((x) => {
      const verdict = x.error ? 'not judged' : x.violations.length ? `**${x.violations.length} violation(s)**` : 'ok';
      const what = x.effects ? effectSummary(x.effects) : '-';
      return `- ${x.schedule.program} \`${x.schedule.id}\` seed ${x.schedule.seed}: ${what}${x.error || effective(x) ? '' : ' (**no effect**: not counted)'}; ${verdict}`;
    }),
    '',
    '</details>',
  ];
}

const DOC_HEADER = `# Reliability

What the operator guarantees under faults, and the evidence. The sections marked \`bench:\` are
rewritten by \`npm run bench -- faults\` (scripts/lab/faults/); write elsewhere in this file by hand.
`;

/** Writes (or replaces) the campaign's section of `path`, and the timeline chart beside it. */
export function writeCampaignDoc(path: string, markdown: string, timelineSvg: string | undefined): void {
  if (!existsSync(path)) writeFileSync(path, DOC_HEADER);
  updateDoc(path, [{ id: 'faults', markdown, ...(timelineSvg ? { assets: { [TIMELINE_FILE]: timelineSvg } } : {}) }]);
}
