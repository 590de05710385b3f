/**
 * What the fault campaign runs and judges: a program (ours, the controller-runtime peer, the Go
 * echoperator, or a mutant of ours) started as replicas, each through its own fault proxy.
 * The interface of the campaign's contract; programs.ts makes the programs.
 */

export type FaultClass =
  | 'intermediate'
  | 'stale'
  | 'unobserved'
  | 'restart'
  | 'partition'
  | 'overload'
  | 'late'
  | 'ambiguous'
  | 'refusal'
  | 'recreate'
  | 'ttl'
  | 'stale-apiserver'
  | 'generated';

/** One running replica of a program. */
export interface ProgramProcess {
  replica: string;
  pid: number;
  /** Settles once the process ended and everything it wrote was read. */
  exited: Promise<{ code: number | null; signal: string | null }>;
  /** Sends `signal` (default SIGKILL) unless the process already ended. */
  kill(signal?: NodeJS.Signals): void;
  /** What it wrote to stdout and stderr so far (the last MiB). */
  output(): string;
}

export interface Program {
  /** 'echoperator' | 'controller-runtime-naive' | 'controller-runtime-advised' | 'go-echoperator' | 'mutant:<name>' */
  name: string;
  kinds: ('Echo' | 'ScheduledEcho')[];
  /** Whether HA (a Lease) is supported: its replicas elect a leader on LEASE_NAME. */
  leaderElection: boolean;
  lease?: { durationS: number; renewS: number; retryS: number };
  /**
   * The ServiceAccount identity the proxy impersonates and the RBAC it needs (apply before start),
   * the Lease's included: in `namespace`, so start replicas with leaseNamespace = namespace.
   */
  rbac(namespace: string): { user: string; groups: string[]; manifests: object[] };
  start(opts: {
    kubeconfig: string;
    replica: string;
    namespace: string;
    leaseNamespace: string;
    env?: Record<string, string>;
  }): Promise<ProgramProcess>;
  /** Resolves when the replica is ready (caches synced / leader or standby), rejects on exit. */
  ready(p: ProgramProcess): Promise<void>;
}

/** The name of the Lease every program's replicas contend for (in the leaseNamespace given to start). */
export const LEASE_NAME = 'echoperator';
