/**
 * The campaign's basic vocabulary, imported by the schedules and by the classes the schedules
 * draw from (a leaf: it imports nothing, so no class module imports schedules.ts back): the kinds
 * and workloads, what the schedules know of a program, and the faults of the first six classes.
 */

export type Kind = 'Echo' | 'ScheduledEcho';
export const WORKLOADS = {
  'echo-basic': ['Echo'],
  'scheduled-basic': ['ScheduledEcho'],
  mixed: ['Echo', 'ScheduledEcho'],
} as const satisfies Record<string, readonly Kind[]>;
export type WorkloadName = keyof typeof WORKLOADS;
/** What the schedules need to know of a program (a subset of programs.ts's Program). */
export interface ProgramTraits {
  name: string;
  kinds: readonly Kind[];
  leaderElection: boolean;
  lease?: { durationS: number; renewS: number; retryS: number };
}

/** The faults of the first six classes (issue 35); times are ms after the workload's first write. */
export type FirstFaults =
  | { class: 'intermediate'; killAfterWrite: number }
  | {
      class: 'stale';
      /**
       * Which of the standby's watches lag: every object watch, or the Echo watches alone (watches
       * of different kinds out of step, as after one of them re-lists).
       */
      lagging: 'objects' | 'echos';
      watchDelayMs: number;
      relativeToResync: 'below' | 'above';
      /** For 'objects', ms after the workload's first write; for 'echos', after the first run the program finished. */
      killLeaderAtMs: number;
    }
  | {
      class: 'unobserved';
      mode: 'drop' | 'merge';
      drop: number;
      dropKind?: Kind | 'Job' | 'CronJob';
      mergeMs: number;
      expireAtMs: number;
      expireNextWatches: number;
    }
  | {
      class: 'restart';
      /**
       * etcd compacted at its current revision, then every replica's watch connections reset, so
       * each resumes from the resourceVersion it had: one from before the compaction gets a 410
       * where the API server serves the watch from etcd (the campaign's does for Jobs and
       * CronJobs, runner/controlplane.ts); its watch cache would serve it without.
       */
      compact: boolean;
      /** kube-apiserver killed and started again (after the compaction, in 'both'). */
      restartApiserver: boolean;
      atMs: number;
    }
  | { class: 'partition'; atMs: number; silenceMs: number }
  | { class: 'overload'; status: 429 | 503; retryAfterS: number; atMs: number; ms: number; fraction: number };
