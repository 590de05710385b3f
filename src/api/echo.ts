import { API_VERSION } from './group.js';
import { customResourceSchema, messageSchema, type Condition, type ObjectMeta } from './schema.js';
import { defineCustomResource } from './crd.js';

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
    phase: { type: 'string', enum: [...ECHO_PHASES], description: 'Where the current run is.' },
    jobName: { type: 'string', description: 'The Job running the current message.' },
    startTime: { type: 'string', format: 'date-time' },
    completionTime: { type: 'string', format: 'date-time' },
  },
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
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
