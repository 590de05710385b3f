import { API_VERSION } from './group.js';
import { customResourceSchema, messageSchema, type Condition, type ObjectMeta } from './schema.js';
import { defineCustomResource, readyColumns } from './crd.js';

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
  /** An IANA time zone name (Europe/Madrid) the schedule is read in; absent: Etc/UTC. */
  timeZone?: string;
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

/**
 * The names the CronJob API's own check lets through to the time zone database (parts of at most
 * 14 letters, digits, '.', '_', '-', '+', none starting with '-' or '.', no ':', so no "+01:00"
 * offset, which CEL would read as one), minus "Local" (the host's zone, which the CronJob API
 * refuses in any case).
 */
const TZ_PART = '[A-Za-z0-9_+][A-Za-z0-9._+-]{0,13}';
export const TIME_ZONE_PATTERN = `^${TZ_PART}(/${TZ_PART})*$`;

/**
 * An unknown zone is refused at admission, not later by the CronJob API: CEL's timestamp
 * functions take a zone and fail on one the API server's database (the one the CronJob
 * controller uses) does not hold, and a failing rule refuses the object with the error, e.g.
 * `spec.timeZone: Invalid value: "string": unknown time zone Mars/Olympus evaluating rule: ...`.
 * `&&` stops at the pattern, so a malformed name gets the messageExpression instead.
 */
const TIME_ZONE_RULE =
  `self.matches('${TIME_ZONE_PATTERN}') && self.lowerAscii() != 'local' && ` + `timestamp('2000-01-01T00:00:00Z').getHours(self) >= 0`;
const TIME_ZONE_MESSAGE = 'must be a name from the IANA time zone database, such as Europe/Madrid or America/New_York';

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
        description: 'A cron schedule, e.g. "*/1 * * * *" or "@hourly" (times in timeZone, UTC when unset).',
        maxLength: 128,
        'x-kubernetes-validations': [
          {
            rule: `self.matches('${SCHEDULE_PATTERN.replaceAll('\\', '\\\\')}')`,
            message:
              'must be a cron schedule of five fields (minute hour day-of-month month day-of-week), e.g. "*/5 * * * *", or one of @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly',
          },
        ],
      },
      timeZone: {
        type: 'string',
        description:
          'The time zone the schedule is read in, a name from the IANA time zone database, e.g. "Europe/Madrid" (passed to the CronJob). Unset: Etc/UTC.',
        maxLength: 64,
        'x-kubernetes-validations': [
          { rule: TIME_ZONE_RULE, message: TIME_ZONE_MESSAGE, messageExpression: `'unknown time zone ' + self + ': ${TIME_ZONE_MESSAGE}'` },
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
  conditionsDescription:
    'Ready: True once the CronJob is in place and runs on the schedule; False with the error while the operator cannot make it so (it retries). Stalled: True when no retry can succeed without a change, e.g. a schedule the CronJob API refuses or a CronJob of that name the operator did not make.',
});

/** ScheduledEcho's one definition: its REST paths, CRD, owner references and RBAC derive from it. */
export const SCHEDULED_ECHOS = defineCustomResource<ScheduledEcho>({
  kind: 'ScheduledEcho',
  resource: 'scheduledechos',
  singular: 'scheduledecho',
  shortNames: ['sec'],
  schema,
  printerColumns: [
    { name: 'Message', type: 'string', jsonPath: '.spec.message', priority: 1 },
    { name: 'Schedule', type: 'string', jsonPath: '.spec.schedule' },
    { name: 'TimeZone', type: 'string', jsonPath: '.spec.timeZone', description: 'The time zone of the schedule; empty: Etc/UTC.' },
    { name: 'Last Run', type: 'date', jsonPath: '.status.lastScheduleTime' },
    ...readyColumns('ScheduledEcho'),
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
});
