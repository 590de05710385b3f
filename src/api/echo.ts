import { API_VERSION } from './group.js';
import { customResourceSchema, messageSchema, type Condition, type ObjectMeta } from './schema.js';
import { defineCustomResource, readyColumns } from './crd.js';

/** An Echo prints its message once, as a Job in its own namespace. */
export interface Echo {
  apiVersion: typeof API_VERSION;
  kind: 'Echo';
  metadata: ObjectMeta;
  spec: EchoSpec;
  status?: EchoStatus;
}

export interface EchoSpec {
  message: string;
}

export const ECHO_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed'] as const;
export type EchoPhase = (typeof ECHO_PHASES)[number];

export interface EchoStatus {
  phase?: EchoPhase;
  jobName?: string;
  startTime?: string;
  completionTime?: string;
  observedGeneration?: number;
  conditions?: Condition[];
}

const schema = customResourceSchema({
  description: 'Echo prints a message once, as a Job in the same namespace.',
  spec: {
    type: 'object',
    description: 'What to print.',
    required: ['message'],
    properties: { message: messageSchema },
  },
  statusDescription: 'The last observed state of the run.',
  status: {
    phase: {
      type: 'string',
      enum: [...ECHO_PHASES],
      description: 'Where the current run is: Pending (Job not started), Running, Succeeded (printed) or Failed.',
    },
    jobName: { type: 'string', description: 'The Job running the current message.' },
    startTime: { type: 'string', format: 'date-time', description: 'When the Job started running the current message.' },
    completionTime: {
      type: 'string',
      format: 'date-time',
      description: 'When the Job printed the current message (set once it succeeded).',
    },
  },
  conditionsDescription:
    "Ready: True once the message is printed, False before and when the run failed, with the reason. Reconciling: True while the Job has not finished. Stalled: True when the run failed (an Echo runs once; a new message starts another run). Succeeded: the Job's outcome (JobPending, JobRunning, JobComplete or its failure reason). Reconciled: whether the operator's last pass made the Job match the Echo.",
});

/** Echo's one definition: its REST paths, CRD, owner references and RBAC derive from it. */
export const ECHOS = defineCustomResource<Echo>({
  kind: 'Echo',
  resource: 'echos',
  singular: 'echo',
  shortNames: ['ec'],
  schema,
  printerColumns: [
    { name: 'Message', type: 'string', jsonPath: '.spec.message', priority: 1 },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Job', type: 'string', jsonPath: '.status.jobName' },
    // -o wide: when the message was printed (blank until then).
    { name: 'Completed', type: 'date', jsonPath: '.status.completionTime', priority: 1, description: 'When the Job printed the message.' },
    ...readyColumns('Echo'),
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
