/**
 * The generated class (Acto's style): a random sequence of user operations drawn from the
 * schedule's seed, with at most one fault of another class mixed in. Pure: every function here
 * is a function of its arguments, so a sequence is replayable from `<id>:<seed>` and printable.
 *
 * The operations: create, edit (the message; a ScheduledEcho's schedule and time zone, set or
 * unset), delete, delete and re-create under the same name, hand edits (a label on an Echo's Job;
 * a CronJob's schedule, or suspended) and hand deletes (an Echo's finished Job, a CronJob), and
 * edits the CRD refuses (play.ts checks the API server refuses them naming the field, and that
 * nothing changed).
 *
 * Guarantees:
 *  - every sequence is valid for its kinds: an operation names an object alive at that point
 *    (a create one that is not), a hand operation an object the program made, and no Echo ends
 *    with its current run's Job removed by hand (it is edited or deleted after: the final state
 *    would rightly miss that Job, and a program must not run a generation twice);
 *  - the Echo operations and the Scheduled ones come from two streams of the seed, merged by a
 *    third: the same seed gives the same Echo operations whatever the kinds, so a program without
 *    ScheduledEcho plays exactly the Echo part of ours (matched runs play the joint kinds anyway);
 *  - the fault comes from a fourth stream: the same for every program with the same leader
 *    election, its times moved into the sequence (intBetween 0..FAULT_SHIFT_MS later).
 */
import { deriveSeed, intBetween, mulberry32, pick } from '../random.js';
import type { FirstFaults, Kind, ProgramTraits, WorkloadName } from '../vocabulary.js';

export type EchoOp =
  | { op: 'create-echo'; name: string; message: string }
  | { op: 'edit-echo'; name: string; message: string }
  | { op: 'delete-echo'; name: string }
  | { op: 'recreate-echo'; name: string; message: string }
  /** Delete the Echo's Job once its run finished (as a TTL controller or a user would). */
  | { op: 'remove-finished-job'; name: string }
  /** A hand edit of the Echo's finished Job: a label, which must change nothing the program does. */
  | { op: 'label-job'; name: string }
  | { op: 'refused-echo'; name: string; field: 'spec.message'; value: string };

export interface ScheduledSpec {
  message: string;
  schedule: string;
  timeZone?: string;
}

export type ScheduledOp =
  | ({ op: 'create-scheduled'; name: string } & ScheduledSpec)
  /** A merge patch of the spec: a null timeZone unsets it. */
  | { op: 'edit-scheduled'; name: string; spec: { message?: string; schedule?: string; timeZone?: string | null } }
  | { op: 'delete-scheduled'; name: string }
  | ({ op: 'recreate-scheduled'; name: string } & ScheduledSpec)
  /** Hand edits and deletes of the CronJob the program made: it must put it back as the spec says. */
  | { op: 'suspend-cronjob'; name: string }
  | { op: 'reschedule-cronjob'; name: string; schedule: string }
  | { op: 'delete-cronjob'; name: string }
  | { op: 'refused-scheduled'; name: string; field: 'spec.message' | 'spec.schedule' | 'spec.timeZone'; value: string };

export type GeneratedOp = EchoOp | ScheduledOp;
export type RefusedOp = Extract<GeneratedOp, { op: 'refused-echo' | 'refused-scheduled' }>;

/** A fault of another class, mixed into the sequence. */
export type MixedFault = Extract<FirstFaults, { class: Exclude<(typeof MIXED)[number], 'none'> }>;
export interface GeneratedFaults {
  class: 'generated';
  ops: GeneratedOp[];
  fault?: MixedFault;
}

export const ECHO_NAMES = ['e1', 'e2', 'e3'] as const;
export const SCHEDULED_NAMES = ['s1', 's2'] as const;
const MESSAGES = ['one', 'two', 'three', 'hello, world', "it's 100 %", 'a "quoted" word', 'ünïcödé ✓', 'tab\tand  spaces'];
const SCHEDULES = ['*/5 * * * *', '0 * * * *', '@hourly', '*/10 * * * *', '30 2 * * 1-5'];
const ZONES = ['Europe/Madrid', 'America/New_York', 'Asia/Tokyo'];
/** Values the CRD refuses, per field (api/schema.ts, api/scheduledecho.ts). */
export const REFUSED_VALUES = {
  'spec.message': ['', 'nul \u0000 inside', 'x'.repeat(4097)],
  'spec.schedule': ['every minute', '* * * *'],
  'spec.timeZone': ['Mars/Olympus', 'Local'],
} as const;
/** Operations per stream: Echos 5..9 (before the closing edits), ScheduledEchos 2..5. */
const ECHO_OPS = [5, 9] as const;
const SCHEDULED_OPS = [2, 5] as const;
/** The classes a fault is drawn from ('none': the operations alone); partition needs leader election. */
const MIXED = ['none', 'intermediate', 'unobserved', 'overload', 'partition'] as const;
/** How far into the sequence a timed fault may start, ms after its first write. */
export const FAULT_SHIFT_MS = 2000;
/** A kill after the k-th counted write, k up to this (a sequence makes more writes than that). */
const KILL_AFTER_MAX = 12;

/** The widest workload a program takes: its kinds decide a sequence's operations. */
export function widestWorkload(workloads: readonly WorkloadName[]): WorkloadName {
  return workloads.includes('mixed') ? 'mixed' : workloads[0]!;
}

/**
 * The name a generated schedule's seed derives from: its id without the workload, so that
 * `generated.mixed.3` (ours) and `generated.echo-basic.3` (a peer) draw the same Echo operations.
 */
export function generatedSeedName(id: string): string {
  const m = /^generated\.[a-z-]+\.(\d+)$/.exec(id);
  return m ? `generated.${m[1]}` : id;
}

/** A weighted choice among the candidates that apply (weight 0 or an empty name list: left out). */
function choose<K extends string>(random: () => number, weights: Record<K, number>): K {
  const entries = (Object.entries(weights) as [K, number][]).filter(([, w]) => w > 0);
  let x = random() * entries.reduce((a, [, w]) => a + w, 0);
  for (const [k, w] of entries) if ((x -= w) < 0) return k;
  return entries.at(-1)![0];
}

const other = (random: () => number, pool: readonly string[], current: string | undefined): string =>
  pick(
    random,
    pool.filter((x) => x !== current),
  );

/** The Echo operations of one stream. */
export function echoOps(random: () => number): EchoOp[] {
  const live = new Map<string, { message: string; jobRemoved: boolean }>();
  const ops: EchoOp[] = [];
  const n = intBetween(random, ...ECHO_OPS);
  while (ops.length < n) {
    const absent = ECHO_NAMES.filter((x) => !live.has(x));
    const present = [...live.keys()];
    const withJob = present.filter((x) => !live.get(x)!.jobRemoved);
    const kind = choose(random, {
      create: absent.length ? (present.length ? 2 : 1) : 0,
      edit: present.length ? 3 : 0,
      delete: present.length ? 1 : 0,
      recreate: present.length ? 1 : 0,
      removeJob: withJob.length ? 1 : 0,
      labelJob: withJob.length ? 1 : 0,
      refused: present.length ? 1 : 0,
    });
    if (kind === 'create') {
      const name = pick(random, absent);
      const message = pick(random, MESSAGES);
      live.set(name, { message, jobRemoved: false });
      ops.push({ op: 'create-echo', name, message });
    } else if (kind === 'removeJob' || kind === 'labelJob') {
      const name = pick(random, withJob);
      if (kind === 'removeJob') live.get(name)!.jobRemoved = true;
      ops.push({ op: kind === 'removeJob' ? 'remove-finished-job' : 'label-job', name });
    } else {
      const name = pick(random, present);
      const message = other(random, MESSAGES, live.get(name)!.message);
      if (kind === 'edit' || kind === 'recreate') {
        live.set(name, { message, jobRemoved: false });
        ops.push({ op: kind === 'edit' ? 'edit-echo' : 'recreate-echo', name, message });
      } else if (kind === 'delete') {
        live.delete(name);
        ops.push({ op: 'delete-echo', name });
      } else ops.push({ op: 'refused-echo', name, field: 'spec.message', value: pick(random, REFUSED_VALUES['spec.message']) });
    }
  }
  for (const [name, s] of live)
    if (s.jobRemoved)
      ops.push(random() < 0.5 ? { op: 'edit-echo', name, message: other(random, MESSAGES, s.message) } : { op: 'delete-echo', name });
  return ops;
}

function scheduledSpec(random: () => number, message?: string): ScheduledSpec {
  const zone = random() < 0.4 ? pick(random, ZONES) : undefined;
  return { message: other(random, MESSAGES, message), schedule: pick(random, SCHEDULES), ...(zone ? { timeZone: zone } : {}) };
}

/** The ScheduledEcho operations of one stream. */
export function scheduledOps(random: () => number): ScheduledOp[] {
  const live = new Map<string, ScheduledSpec>();
  const ops: ScheduledOp[] = [];
  const n = intBetween(random, ...SCHEDULED_OPS);
  while (ops.length < n) {
    const absent = SCHEDULED_NAMES.filter((x) => !live.has(x));
    const present = [...live.keys()];
    const some = present.length ? 1 : 0;
    const kind = choose(random, {
      create: absent.length ? (some ? 2 : 1) : 0,
      edit: 3 * some,
      delete: some,
      recreate: some,
      suspend: some,
      reschedule: some,
      deleteCronJob: some,
      refused: some,
    });
    if (kind === 'create') {
      const name = pick(random, absent);
      const spec = scheduledSpec(random);
      live.set(name, spec);
      ops.push({ op: 'create-scheduled', name, ...spec });
      continue;
    }
    const name = pick(random, present);
    const spec = live.get(name)!;
    switch (kind) {
      case 'edit': {
        const field = pick(random, ['message', 'schedule', 'timeZone'] as const);
        const value =
          field === 'message'
            ? other(random, MESSAGES, spec.message)
            : field === 'schedule'
              ? other(random, SCHEDULES, spec.schedule)
              : spec.timeZone && random() < 0.5
                ? null
                : other(random, ZONES, spec.timeZone);
        const { timeZone: _unset, ...rest } = spec;
        live.set(name, value === null ? rest : { ...spec, [field]: value });
        ops.push({ op: 'edit-scheduled', name, spec: { [field]: value } });
        break;
      }
      case 'delete':
        live.delete(name);
        ops.push({ op: 'delete-scheduled', name });
        break;
      case 'recreate': {
        const next = scheduledSpec(random, spec.message);
        live.set(name, next);
        ops.push({ op: 'recreate-scheduled', name, ...next });
        break;
      }
      case 'suspend':
        ops.push({ op: 'suspend-cronjob', name });
        break;
      case 'reschedule':
        ops.push({ op: 'reschedule-cronjob', name, schedule: other(random, SCHEDULES, spec.schedule) });
        break;
      case 'deleteCronJob':
        ops.push({ op: 'delete-cronjob', name });
        break;
      case 'refused': {
        const field = pick(random, Object.keys(REFUSED_VALUES) as (keyof typeof REFUSED_VALUES)[]);
        ops.push({ op: 'refused-scheduled', name, field, value: pick(random, REFUSED_VALUES[field]) });
        break;
      }
    }
  }
  return ops;
}

/** Both lists merged, each in its order, drawing the next from one in proportion to what it has left. */
export function interleave<A, B>(a: readonly A[], b: readonly B[], random: () => number): (A | B)[] {
  const out: (A | B)[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length || j < b.length) {
    const left = a.length - i;
    if (random() * (left + b.length - j) < left) out.push(a[i++]!);
    else out.push(b[j++]!);
  }
  return out;
}

/**
 * A generated schedule's faults: the operations for `kinds` and the mixed fault. `random` is the
 * schedule's stream (one draw: the base of the four streams); `drawFault` draws a fault of
 * another class as that class would (schedules.ts faultsFor).
 */
export function generatedFaults(
  kinds: readonly Kind[],
  random: () => number,
  program: ProgramTraits,
  drawFault: (c: MixedFault['class'], random: () => number) => FirstFaults,
): GeneratedFaults {
  const base = Math.floor(random() * 4294967296) >>> 0;
  const stream = (name: string): (() => number) => mulberry32(deriveSeed(base, name));
  const echos = kinds.includes('Echo') ? echoOps(stream('echo')) : [];
  const scheduled = kinds.includes('ScheduledEcho') ? scheduledOps(stream('scheduled')) : [];
  const ops = interleave(echos, scheduled, stream('interleave'));
  const fault = mixedFault(stream('fault'), program, drawFault);
  return { class: 'generated', ops, ...(fault ? { fault } : {}) };
}

function mixedFault(
  random: () => number,
  program: ProgramTraits,
  drawFault: (c: MixedFault['class'], random: () => number) => FirstFaults,
): MixedFault | undefined {
  const c = pick(
    random,
    MIXED.filter((x) => x !== 'partition' || program.leaderElection),
  );
  if (c === 'none') return undefined;
  if (c === 'intermediate') return { class: c, killAfterWrite: intBetween(random, 1, KILL_AFTER_MAX) };
  const shift = intBetween(random, 0, FAULT_SHIFT_MS);
  const f = drawFault(c, random) as MixedFault;
  if (f.class === 'unobserved') return { ...f, expireAtMs: f.expireAtMs + shift };
  if ('atMs' in f) return { ...f, atMs: f.atMs + shift };
  return f;
}

/** A value as the sequence shows it: JSON, a long one cut with its length. */
function shown(v: unknown): string {
  const s = JSON.stringify(v);
  return s.length > 40 ? `${s.slice(0, 30)}…" (${String(v).length} chars)` : s;
}

/** One line per operation, numbered, then the fault: what a failing schedule prints. */
export function describeSequence(f: GeneratedFaults): string[] {
  const lines = f.ops.map((o, i) => {
    const { op, name, ...rest } = o;
    const args = Object.entries(rest).map(([k, v]) => `${k}=${shown(v)}`);
    return `${String(i + 1).padStart(2)}. ${op} ${name}${args.length ? ` ${args.join(' ')}` : ''}`;
  });
  const fault = f.fault ? Object.entries(f.fault).map(([k, v]) => `${k}=${shown(v)}`) : ['none'];
  return [...lines, `fault: ${fault.join(' ')}`];
}

/** A generated schedule's sequence, indented under its violations; nothing for another class. */
export function sequenceLines(f: { class: string } | GeneratedFaults | FirstFaults): string[] {
  return f.class === 'generated' ? ['  the sequence:', ...describeSequence(f as GeneratedFaults).map((l) => `    ${l}`)] : [];
}
