/**
 * The Pod that prints a message, shared by Echo's Job and ScheduledEcho's CronJob.
 */
import type { V1PodTemplateSpec } from '@kubernetes/client-node';

/** Nobody: the restricted Pod Security profile requires a non-root user. */
const RUN_AS = 65532;

/**
 * printf '%s\n' MESSAGE: exec'd directly, no shell, so the message is printed literally whatever
 * it holds (quotes, $(...), backslashes, a leading "-n" that `echo` would take as a flag). The
 * install's admission policy (infra/confinement.ts) allows this command and no other.
 */
export const ECHO_COMMAND_PREFIX: readonly string[] = ['printf', '%s\\n'];

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
          command: [...ECHO_COMMAND_PREFIX, message],
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
