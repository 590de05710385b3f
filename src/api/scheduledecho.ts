import { API_VERSION } from './group.js';
import { customResourceSchema, messageSchema, type Condition, type ObjectMeta } from './schema.js';
import { defineCustomResource } from './crd.js';

/** A ScheduledEcho prints its message on a cron schedule, as a CronJob in its own namespace. */
export interface ScheduledEcho {
  apiVersion: typeof API_VERSION;
  kind: 'ScheduledEcho';
  metadata: ObjectMeta;
  spec: ScheduledEchoSpec;
  status?: ScheduledEchoStatus;
}

export interface ScheduledEchoSpec {
  message: string;
  schedule: string;
}

export interface ScheduledEchoStatus {
  cronJobName?: string;
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
  observedGeneration?: number;
  conditions?: Condition[];
}

/**
 * Five cron fields (minute hour day-of-month month day-of-week: digits, names, * ? / , -) or a
 * predefined @schedule. Range errors (minute 61) are left to the CronJob's own validation,
 * which the reconciler reports in a condition.
 */
const CRON_FIELD = '[0-9A-Za-z*?/,-]+';
export const SCHEDULE_PATTERN = `^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|(${CRON_FIELD}[ \\t]+){4}${CRON_FIELD})$`;

const schema = customResourceSchema({
  description: 'ScheduledEcho prints a message on a cron schedule, as a CronJob in the same namespace.',
  spec: {
    type: 'object',
    description: 'What to print, and when.',
    required: ['message', 'schedule'],
    properties: {
      message: messageSchema,
      schedule: {
        type: 'string',
        description: 'A cron schedule, e.g. "*/1 * * * *" or "@hourly" (times in UTC).',
        maxLength: 128,
        'x-kubernetes-validations': [
          {
            rule: `self.matches('${SCHEDULE_PATTERN.replaceAll('\\', '\\\\')}')`,
            message:
              'must be a cron schedule of five fields (minute hour day-of-month month day-of-week), e.g. "*/5 * * * *", or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly',
          },
        ],
      },
    },
  },
  statusDescription: 'The last observed state of the schedule.',
  status: {
    cronJobName: { type: 'string', description: 'The CronJob that runs the schedule.' },
    lastScheduleTime: { type: 'string', format: 'date-time', description: 'When a run was last started.' },
    lastSuccessfulTime: { type: 'string', format: 'date-time', description: 'When a run last succeeded.' },
  },
});

/** ScheduledEcho's one definition: its REST paths, CRD, owner references and RBAC derive from it. */
export const SCHEDULED_ECHOS = defineCustomResource({
  kind: 'ScheduledEcho',
  resource: 'scheduledechos',
  singular: 'scheduledecho',
  shortNames: ['sec'],
  schema,
  printerColumns: [
    { name: 'Message', type: 'string', jsonPath: '.spec.message', priority: 1 },
    { name: 'Schedule', type: 'string', jsonPath: '.spec.schedule' },
    { name: 'Last Run', type: 'date', jsonPath: '.status.lastScheduleTime' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
