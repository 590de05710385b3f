/**
 * Many pod runs on the real node, started a window at a time and read back as each one finishes:
 * for tests that print hundreds of messages without holding hundreds of pods on the node at once
 * (its limit is 110, shared with the other tests) and without a kubectl call per run.
 *
 * A run is known by `key`, the value of `label` on its pod (the operator's owner label: the Echo's
 * or ScheduledEcho's name). Each poll lists the namespace's finished pods once, reads the log of every newly
 * Succeeded one, records a Failed one as such, and starts more runs while fewer than `window` are
 * unfinished.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { eventually, listItems } from './kube.js';
import type { PodLogReader } from './podlogs.js';

/** A run's outcome: the bytes its pod printed, or why there are none. */
export type RunOutput = { printed: Buffer } | { failed: string };

export interface PodRuns {
  ns: string;
  /** The pod label whose value is a run's key. */
  label: string;
  keys: string[];
  /** Starts these runs (one request for all of them, preferably). */
  start: (keys: string[]) => void;
  read: PodLogReader;
  window: number;
  timeoutMs: number;
}

export async function runAll(runs: PodRuns): Promise<Map<string, RunOutput>> {
  const outputs = new Map<string, RunOutput>();
  const waiting = [...runs.keys];
  const started = new Set<string>();
  const poll = async (): Promise<boolean> => {
    const unfinished = [...started].filter((k) => !outputs.has(k)).length;
    const next = waiting.splice(0, Math.max(0, runs.window - unfinished));
    if (next.length > 0) {
      runs.start(next);
      next.forEach((k) => started.add(k));
    }
    const pods = listItems<V1Pod>(['get', 'pods', '-l', runs.label, '--field-selector', 'status.phase!=Pending,status.phase!=Running'], {
      namespace: runs.ns,
    });
    const finished = pods.filter((p) => {
      const key = p.metadata?.labels?.[runs.label];
      return key !== undefined && started.has(key) && !outputs.has(key) && ['Succeeded', 'Failed'].includes(p.status?.phase ?? '');
    });
    await Promise.all(
      finished.map(async (pod) => {
        const key = pod.metadata!.labels![runs.label]!;
        if (pod.status!.phase === 'Failed') {
          const terminated = pod.status?.containerStatuses?.[0]?.state?.terminated;
          outputs.set(key, {
            failed: `pod ${pod.metadata!.name} failed: ${terminated?.reason ?? pod.status?.reason} (exit ${terminated?.exitCode})`,
          });
        } else {
          outputs.set(key, { printed: await runs.read(runs.ns, pod.metadata!.name!) });
        }
      }),
    );
    return outputs.size === runs.keys.length;
  };
  await eventually(`${runs.keys.length} runs in ${runs.ns} to finish`, poll, runs.timeoutMs, 2_000).catch((err: unknown) => {
    const missing = runs.keys.filter((k) => !outputs.has(k));
    throw new Error(`${String(err)}; unfinished: ${missing.slice(0, 20).join(', ')}${missing.length > 20 ? ', ...' : ''}`);
  });
  return outputs;
}
