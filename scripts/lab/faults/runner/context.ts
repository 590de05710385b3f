/**
 * What the code of a fault class may use of the schedule being played: the admin's client, the
 * replicas, the control plane, the timeline and notes, and the effects it records. Generic in
 * those effects, each class naming its own, so that a class's module needs nothing of the runner
 * that plays it (runner/faults.ts imports the classes; a class importing it back would be a
 * cycle). runner/faults.ts's FaultContext is this with every class's effects and the schedule's
 * faults.
 */
import type { RestClient } from '../../../../src/kube/rest.js';
import type { ControlPlaneState } from '../../../testbed/controlplane/cluster.js';
import type { TimelineEvent } from '../timeline.js';
import type { ReplicaSet } from './replicas.js';
import type { SecondApiserver } from './second-apiserver.js';

export interface FaultRun<Effects extends object = object> {
  /** The schedule's faults: each class's code knows its own shape. */
  faults: unknown;
  /** The admin's client and the schedule's namespace, to see what the program did. */
  rest: RestClient;
  namespace: string;
  seed: number;
  replicas: ReplicaSet;
  state: ControlPlaneState;
  log: (line: string) => void;
  timeline: TimelineEvent[];
  notes: string[];
  /** What the faults did that only the runner sees (the proxies count the rest). */
  effects: Effects;
  /** The stale-apiserver class's second kube-apiserver, which the standby reaches. */
  secondApiserver?: SecondApiserver;
}
