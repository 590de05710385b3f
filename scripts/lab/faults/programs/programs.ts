/**
 * The programs the fault campaign runs (the contract's `programs.ts`): ours, the
 * controller-runtime peer, the Go echoperator built from its public source, and mutants of ours,
 * each able to give its RBAC, start a replica through a proxy's kubeconfig, and say when a
 * replica is ready. One file per program under programs/.
 *
 * programs(names) builds what the names need, each from its cache when it can: our operator as
 * the benchmarks run it (scripts/lab/bench/env.ts operatorCommand: ECHOPERATOR_CMD, else a fresh
 * dist/ bundle, else a bundle of src/ now), the peer (scripts/lab/bench/contestants.ts peerCommand),
 * the Go binary (scripts/lab/migration/goechoperator.ts), a mutant's bundle (programs/mutants.ts).
 */
import { peerCommand } from '../../bench/contestants.js';
import { operatorCommand } from '../../bench/env.js';
import { echoperatorProgram } from './echoperator.js';
import { goEchoperatorBinary, goEchoperatorProgram } from './goechoperator.js';
import { buildMutant, MUTANTS } from '../mutants/mutants.js';
import { controllerRuntimeProgram } from './peer.js';
import type { Program } from './types.js';

export { LEASE_NAME, type FaultClass, type Program, type ProgramProcess } from './types.js';
export { MUTANTS } from '../mutants/mutants.js';

/** Every name programs() accepts. */
export const PROGRAM_NAMES: readonly string[] = [
  'echoperator',
  'controller-runtime-naive',
  'controller-runtime-advised',
  'go-echoperator',
  ...MUTANTS.map((m) => `mutant:${m}`),
];

async function program(name: string): Promise<Program> {
  if (name === 'echoperator') return echoperatorProgram(name, (await operatorCommand()).argv);
  if (name === 'controller-runtime-naive' || name === 'controller-runtime-advised')
    return controllerRuntimeProgram((await peerCommand()).argv, name === 'controller-runtime-naive' ? 'naive' : 'advised');
  if (name === 'go-echoperator') return goEchoperatorProgram(goEchoperatorBinary());
  if (name.startsWith('mutant:') && PROGRAM_NAMES.includes(name)) {
    const bundle = buildMutant(name.slice('mutant:'.length));
    return echoperatorProgram(name, [process.execPath, '--enable-source-maps', `${bundle}/echoperator.js`]);
  }
  throw new Error(`unknown program "${name}": one of ${PROGRAM_NAMES.join(', ')}`);
}

/** The named programs, in order, built as needed (one at a time: builds take the machine's CPU). */
export async function programs(names: string[]): Promise<Program[]> {
  const out: Program[] = [];
  for (const name of names) out.push(await program(name));
  return out;
}
