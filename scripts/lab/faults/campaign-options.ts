/**
 * The fault campaign's options, parsed from `npm run bench -- faults ...` (index.ts hands over its
 * parseArgs values). A bad value stops the run naming the option and what it accepts.
 */
import { FAULT_CLASSES, parseReplay, type FaultClass } from './schedules.js';

export interface CampaignOptions {
  /** Schedules per program. */
  schedules: number;
  /** undefined: DEFAULT_PROGRAMS, go-echoperator only when it builds. */
  programs: string[] | undefined;
  classes: FaultClass[];
  seed: number;
  replay?: { id: string; seed: number };
  mutants: boolean;
  /** Mutants: schedules per class and seed; undefined: the whole class, as many as ours met in the run. */
  mutantSchedulesPerClass: number | undefined;
  /** Mutants: the campaign seeds each mutant is played with (at least two give a kill rate over seeds). */
  mutantSeeds: number[];
  /** docs/reliability.md, or undefined to write nothing. */
  docs: string | undefined;
}

export const DEFAULT_SCHEDULES = 300;

export function faultOptions(
  values: {
    schedules?: string;
    programs?: string;
    classes?: string;
    seed?: string;
    replay?: string;
    mutants?: boolean;
    'mutant-seeds'?: string;
    'mutant-schedules'?: string;
  },
  positiveInt: (what: string, v: string) => number,
): Omit<CampaignOptions, 'docs'> {
  const list = (v: string | undefined): string[] | undefined =>
    v
      ?.split(',')
      .map((s) => s.trim())
      .filter(Boolean);
  const classes = list(values.classes) ?? [...FAULT_CLASSES];
  for (const c of classes)
    if (!(FAULT_CLASSES as readonly string[]).includes(c))
      throw new Error(`--classes: unknown class ${JSON.stringify(c)}; choose from ${FAULT_CLASSES.join(', ')}`);
  const seedOf = (option: string, v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 0xffffffff)
      throw new Error(`${option} must be an integer from 0 to 4294967295, got ${JSON.stringify(v)}`);
    return n;
  };
  const seed = values.seed === undefined ? 1 : seedOf('--seed', values.seed);
  const mutantSeeds = (list(values['mutant-seeds']) ?? [String(seed), String((seed + 1) >>> 0)]).map((v) => seedOf('--mutant-seeds', v));
  return {
    schedules: values.schedules ? positiveInt('--schedules', values.schedules) : DEFAULT_SCHEDULES,
    programs: list(values.programs),
    classes: classes as FaultClass[],
    seed,
    ...(values.replay ? { replay: parseReplay(values.replay) } : {}),
    mutants: values.mutants ?? false,
    mutantSchedulesPerClass: values['mutant-schedules'] ? positiveInt('--mutant-schedules', values['mutant-schedules']) : undefined,
    mutantSeeds,
  };
}
