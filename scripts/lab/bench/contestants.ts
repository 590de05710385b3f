/**
 * The two programs the peers benchmarks compare: our operator (the command every benchmark runs,
 * see common.ts operatorCommand) and the controller-runtime peer (scripts/lab/bench/peer, a Go module
 * pinned by its go.mod/go.sum, built from the Go module proxy into the per-user cache, keyed by
 * its content, by the control plane's own build machinery).
 */
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { commandFromEnv } from '../../testbed/command-env.js';
import { ensureOwnGoBinaries } from '../../ship/gobuild.js';
import { customCommand, log, type BenchEnv, type OperatorCommand } from './common.js';

const peerModule = join(dirname(fileURLToPath(import.meta.url)), 'peer');

export interface Contestant {
  /** As the tables name it. */
  name: string;
  /** The bench environment with this program as its operator (startOperator runs it). */
  env: BenchEnv;
  /** How its requests start in the audit log. */
  userAgent: string;
}

/** The peer's pinned controller-runtime version, read from its go.mod. */
export function peerVersion(): string {
  return /sigs\.k8s\.io\/controller-runtime (v\S+)/.exec(readFileSync(join(peerModule, 'go.mod'), 'utf8'))?.[1] ?? 'unknown';
}

export async function peerCommand(): Promise<OperatorCommand> {
  const [binary] = await ensureOwnGoBinaries(
    peerModule,
    { name: 'bench-peer', packages: ['.'], binaries: ['peer'], describe: 'the controller-runtime peer (scripts/lab/bench/peer)' },
    log,
  );
  return { argv: [binary!], kind: 'custom', describe: `controller-runtime ${peerVersion()} peer (scripts/lab/bench/peer)` };
}

/** Our operator, as the bench environment runs it. */
export function ours(env: BenchEnv): Contestant {
  return { name: 'echoperator', env, userAgent: 'echoperator/' };
}

/** Ours first, then the peer; callers alternate the order per round. */
export async function contestants(env: BenchEnv): Promise<[Contestant, Contestant]> {
  return [ours(env), { name: 'controller-runtime', env: { ...env, operator: await peerCommand() }, userAgent: 'echoperator-peer/' }];
}

/**
 * Another build of our operator in the peer's place (BASELINE_CMD, a JSON argv like
 * ECHOPERATOR_CMD, e.g. an earlier commit's bundle), so a change is measured against the code it
 * changes in one run, in alternating rounds; undefined when BASELINE_CMD is unset.
 */
export function baseline(env: BenchEnv): Contestant | undefined {
  const argv = commandFromEnv('BASELINE_CMD');
  if (!argv) return undefined;
  return {
    name: 'baseline',
    env: { ...env, operator: customCommand('BASELINE_CMD', argv) },
    // Runs never overlap and each has its own namespace, so the same product name counts only its own writes.
    userAgent: 'echoperator/',
  };
}

/**
 * Round r's order: the list rotated by r, so that over as many rounds as there are programs each
 * program runs once in each position (for two: as given, then reversed). A mirrored order would
 * put the first program first twice in three rounds and the middle one never, and on this machine
 * a run's place in the sequence moves its time by a tenth.
 */
export function inTurn<T>(list: readonly T[], round: number): T[] {
  const k = list.length === 0 ? 0 : round % list.length;
  return [...list.slice(k), ...list.slice(0, k)];
}
