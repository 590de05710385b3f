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
  /** Mutants: schedules per class at most, until one catches it. */
  mutantSchedulesPerClass: number;
  /** docs/reliability.md, or undefined to write nothing. */
  docs: string | undefined;
}

export const DEFAULT_SCHEDULES = 300;
export const DEFAULT_MUTANT_SCHEDULES_PER_CLASS = 3;

export function faultOptions(
  values: { schedules?: string; programs?: string; classes?: string; seed?: string; replay?: string; mutants?: boolean },
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
  const seed = values.seed === undefined ? 1 : Number(values.seed);
  if (!Number.isInteger(seed) || seed < 0 || seed > 0xffffffff)
    throw new Error(`--seed must be an integer from 0 to 4294967295, got ${JSON.stringify(values.seed)}`);
  return {
    schedules: values.schedules ? positiveInt('--schedules', values.schedules) : DEFAULT_SCHEDULES,
    programs: list(values.programs),
    classes: classes as FaultClass[],
    seed,
    ...(values.replay ? { replay: parseReplay(values.replay) } : {}),
    mutants: values.mutants ?? false,
    mutantSchedulesPerClass: DEFAULT_MUTANT_SCHEDULES_PER_CLASS,
  };
}
