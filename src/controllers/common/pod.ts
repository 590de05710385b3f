/**
 * The Pod that prints a message, shared by Echo's Job and ScheduledEcho's CronJob: it prints every
 * message the CRD admits byte for byte, then one newline (see echoCommand).
 */
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import { escapeKubeletExpansion } from './kubeletescape.js';

/** Nobody: the restricted Pod Security profile requires a non-root user. */
const RUN_AS = 65532;

/**
 * printf '%s\n' MESSAGE: exec'd directly, no shell, so the message is printed literally whatever
 * it holds (quotes, backslashes, % directives, a leading "-n" that `echo` would take as a flag).
 * The install's admission policy (infra/confinement.ts) allows this command and no other.
 */
export const ECHO_COMMAND_PREFIX: readonly string[] = ['printf', '%s\\n'];

/**
 * The container's command: ECHO_COMMAND_PREFIX, then the message with every `$` doubled
 * (escapeKubeletExpansion), since the kubelet would otherwise turn `$$` into `$` and `$(NAME)` into
 * the value of an environment variable before printf ever runs. So every message the CRD admits is
 * printed byte for byte, followed by one newline.
 *
 * Upgrades: for a message without `$` the command is the one earlier versions wrote, so their Jobs
 * and CronJobs are adopted without a write. A ScheduledEcho whose message holds a `$` gets its
 * CronJob re-applied once with the escaped command (the fix; its next run prints the message
 * exactly). An Echo's Job is never rewritten: a run that already happened is not repeated.
 */
export function echoCommand(message: string): string[] {
  return [...ECHO_COMMAND_PREFIX, escapeKubeletExpansion(message)];
}

export function echoPodTemplate(message: string, image: string, labels: Record<string, string>): V1PodTemplateSpec {
  return {
    metadata: { labels },
    spec: {
      restartPolicy: 'Never',
      automountServiceAccountToken: false,
      enableServiceLinks: false,
      securityContext: {
        runAsNonRoot: true,
        runAsUser: RUN_AS,
        runAsGroup: RUN_AS,
        seccompProfile: { type: 'RuntimeDefault' },
      },
      containers: [
        {
          name: 'echo',
          image,
          command: echoCommand(message),
          resources: { requests: { cpu: '10m', memory: '16Mi' }, limits: { memory: '32Mi' } },
          securityContext: {
            allowPrivilegeEscalation: false,
            readOnlyRootFilesystem: true,
            capabilities: { drop: ['ALL'] },
          },
        },
      ],
    },
  };
}
