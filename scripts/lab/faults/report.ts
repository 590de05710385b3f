/**
 * The campaign's results as docs/reliability.md's "Fault campaign" section (between the markers
 * scripts/lab/bench/report.ts's updateDoc owns, so a rerun replaces it and nothing else) and the
 * timeline chart beside it. Pure: campaignMarkdown() is a function of the results.
 */
import { existsSync, writeFileSync } from 'node:fs';
import { updateDoc } from '../bench/report.js';
import type { Violation } from './judge/invariants.js';
import type { FaultClass, Schedule } from './schedules.js';

export const TIMELINE_FILE = 'reliability-timeline.svg';

export interface RunRecord {
  schedule: Schedule;
  violations: Violation[];
  durationMs: number;
  notes: string[];
  /** The runner failed (not the program): the schedule is not judged. */
  error?: string;
}

export interface MutantRecord {
  mutant: string;
  runs: number;
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
  return r.violations.map(
    (v) =>
      `${r.schedule.program} ${r.schedule.id} (seed ${r.schedule.seed}): ${v.invariant}: ${v.detail}\n  replay: ${replayCommand(r.schedule)}`,
  );
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? (s[(s.length - 1) >> 1]! + s[s.length >> 1]!) / 2 : NaN;
};
const secs = (ms: number): string => (Number.isFinite(ms) ? `${(ms / 1000).toFixed(1)} s` : '-');

export function campaignMarkdown(r: CampaignResult, timelineCaption: string | undefined): string {
  const head = [
    'class',
    ...r.programs.flatMap((p) => [`${p}: schedules`, `${p}: violations`]),
    `s per schedule (${r.programs[0]}, median)`,
  ];
  const rows = r.classes.map((c) => {
    const cells = r.programs.flatMap((p) => {
      if (r.notApplicable.some((n) => n.program === p && n.class === c)) return ['n/a', 'n/a'];
      const runs = r.runs.filter((x) => x.schedule.program === p && x.schedule.class === c);
      const errors = runs.filter((x) => x.error).length;
      const bad = runs.filter((x) => x.violations.length).length;
      return [`${runs.length - errors}${errors ? ` (+${errors} not judged)` : ''}`, bad ? `**${bad}**` : '0'];
    });
    const ours = r.runs.filter((x) => x.schedule.program === r.programs[0] && x.schedule.class === c && !x.error);
    return [c, ...cells, secs(median(ours.map((x) => x.durationMs)))];
  });
  const total = (p: string): [number, number] => {
    const runs = r.runs.filter((x) => x.schedule.program === p && !x.error);
    return [runs.length, runs.filter((x) => x.violations.length).length];
  };
  rows.push([
    '**all**',
    ...r.programs.flatMap((p) => total(p).map(String)),
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
    '',
    'Schedules run and schedules with at least one invariant violation, per class and program (n/a: the class needs leader election, which the program lacks):',
    '',
    table(head, rows),
  ];
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
    const caught = r.mutants.filter((m) => m.caughtBy).length;
    out.push(
      '',
      `Mutation score: **${caught} of ${r.mutants.length}** (each mutant is our operator with one bug re-implanted, scripts/lab/faults/mutants/; it is caught when a schedule finds a violation):`,
      '',
    );
    out.push(
      table(
        ['mutant', 'caught', 'schedules run', 'first caught by', 'invariant'],
        r.mutants.map((m) => [
          m.mutant,
          m.caughtBy ? 'yes' : '**no**',
          String(m.runs),
          m.caughtBy ? `\`${m.caughtBy.schedule.id}\` seed ${m.caughtBy.schedule.seed}` : '-',
          m.caughtBy ? m.caughtBy.violation.invariant : '-',
        ]),
      ),
    );
  }
  if (timelineCaption) out.push('', `![one schedule's timeline](${TIMELINE_FILE})`, '', timelineCaption);
  return out.join('\n');
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
