/**
 * The wait before a crashed replica is started again, as kubelet's CrashLoopBackOff computes it
 * for a container (pkg/kubelet/kuberuntime doBackOff over client-go's flowcontrol.Backoff, 10 s
 * initial, 300 s max): the first restart at once (no back-off entry yet), then 10 s, doubling
 * each time, capped at 5 minutes. Within a schedule of seconds the count never resets (kubelet
 * forgets a container's back-off only after it ran for twice the cap). Pure.
 */
export const INITIAL_BACKOFF_MS = 10_000;
export const MAX_BACKOFF_MS = 300_000;

/** The wait before the restart that follows `restartsSoFar` earlier ones. */
export function restartDelayMs(restartsSoFar: number): number {
  if (restartsSoFar <= 0) return 0;
  return Math.min(INITIAL_BACKOFF_MS * 2 ** (restartsSoFar - 1), MAX_BACKOFF_MS);
}
