/**
 * A kubelet stand-in for a control plane without a node: it completes the pods of Jobs as a
 * kubelet would report a container that printed and exited 0, through pods/status, so Jobs finish
 * (the job controller counts a Succeeded pod, removes its batch.kubernetes.io/job-tracking
 * finalizer itself, and marks the Job Complete) without a node, an image or a scheduler.
 *
 * Guarantees: only pods controlled by a Job, not bound to a node, not terminated and not being
 * deleted are touched, each once (a patch that failed is tried again on the pod's next event);
 * the pods of every given namespace are listed before start resolves, then watched (a 410 or an
 * ended watch re-lists); stop() ends the watches and waits for them. It acts as the admin
 * kubeconfig's user: pods/status is the kubelet's to write, not a program's under test.
 */
import type { V1Pod } from '@kubernetes/client-node';
import { loadKubeConfig, PODS, resourcePath, RestClient } from '../../../../src/kube/index.js';

export interface KubeletStandIn {
  stop(): Promise<void>;
  /** Pods completed so far. */
  completed(): number;
}

/** Wait after a failed list or watch before the next try. */
const RETRY_MS = 500;
const WATCH_TIMEOUT_S = 300;
/** start() gives up when the pods of every namespace are not listed by then. */
const START_TIMEOUT_MS = 30_000;

interface PodList {
  metadata?: { resourceVersion?: string };
  items?: V1Pod[];
}

interface WatchLine {
  type?: string;
  object?: V1Pod & { code?: number };
}

export async function startKubeletStandIn(adminKubeconfig: string, namespaces: string[]): Promise<KubeletStandIn> {
  const rest = new RestClient(loadKubeConfig(adminKubeconfig), { userAgent: 'echoperator-faults-kubelet' });
  const stopping = new AbortController();
  const handled = new Set<string>();
  let completed = 0;

  const complete = async (pod: V1Pod): Promise<void> => {
    const uid = pod.metadata?.uid ?? '';
    if (!needsCompleting(pod) || handled.has(uid)) return;
    handled.add(uid);
    try {
      await rest.request('PATCH', resourcePath(PODS, pod.metadata?.namespace, pod.metadata?.name, 'status'), {
        body: { status: succeededStatus(pod, new Date()) },
        contentType: 'application/merge-patch+json',
        signal: stopping.signal,
      });
      completed++;
    } catch {
      handled.delete(uid); // gone, or refused: its next event tries again
    }
  };

  const listed: Promise<void>[] = [];
  const loops = namespaces.map((namespace) => {
    let onListed!: () => void;
    listed.push(new Promise<void>((resolve) => (onListed = resolve)));
    return watchPods(rest, namespace, stopping.signal, complete, onListed);
  });
  const slow = setTimeout(() => stopping.abort(), START_TIMEOUT_MS);
  await Promise.race([Promise.all(listed), Promise.all(loops)]);
  clearTimeout(slow);
  if (stopping.signal.aborted) {
    await Promise.allSettled(loops);
    rest.close();
    throw new Error(`kubelet stand-in: could not list the pods of ${namespaces.join(', ')} within ${START_TIMEOUT_MS} ms`);
  }
  return {
    completed: () => completed,
    async stop() {
      stopping.abort();
      await Promise.allSettled(loops);
      rest.close();
    },
  };
}

/** List, then watch from the list's resourceVersion, until `signal` aborts; a 410 or an end re-lists. */
async function watchPods(
  rest: RestClient,
  namespace: string,
  signal: AbortSignal,
  onPod: (pod: V1Pod) => Promise<void>,
  onListed: () => void,
): Promise<void> {
  const path = resourcePath(PODS, namespace);
  const fieldSelector = 'spec.nodeName=';
  while (!signal.aborted) {
    try {
      const list = await rest.request<PodList>('GET', path, { query: { fieldSelector }, signal });
      await Promise.all((list.items ?? []).map((p) => onPod({ ...p, metadata: { namespace, ...p.metadata } })));
      onListed();
      let resourceVersion = list.metadata?.resourceVersion;
      const query = () => ({ watch: true, allowWatchBookmarks: true, fieldSelector, resourceVersion, timeoutSeconds: WATCH_TIMEOUT_S });
      let expired = false;
      while (!signal.aborted && !expired) {
        await rest.stream(path, query(), signal, (line) => {
          const ev = JSON.parse(line) as WatchLine;
          if (ev.type === 'ERROR') {
            expired = true; // 410 Gone, or another error: the list starts over
            return;
          }
          resourceVersion = ev.object?.metadata?.resourceVersion ?? resourceVersion;
          if ((ev.type === 'ADDED' || ev.type === 'MODIFIED') && ev.object) void onPod(ev.object);
        });
      }
    } catch {
      if (signal.aborted) return;
      await new Promise((r) => setTimeout(r, RETRY_MS));
    }
  }
}

function needsCompleting(pod: V1Pod): boolean {
  const jobOwned = pod.metadata?.ownerReferences?.some((r) => r.controller === true && r.kind === 'Job') ?? false;
  const phase = pod.status?.phase;
  return jobOwned && !pod.spec?.nodeName && !pod.metadata?.deletionTimestamp && phase !== 'Succeeded' && phase !== 'Failed';
}

/** What a kubelet reports for a pod whose containers ran and exited 0 (the status as JSON). */
export function succeededStatus(pod: V1Pod, now: Date): Record<string, unknown> {
  const at = now.toISOString();
  const condition = (type: string, status: string, reason?: string) => ({
    type,
    status,
    lastTransitionTime: at,
    ...(reason ? { reason } : {}),
  });
  return {
    phase: 'Succeeded',
    startTime: at,
    conditions: [
      condition('Initialized', 'True'),
      condition('Ready', 'False', 'PodCompleted'),
      condition('ContainersReady', 'False', 'PodCompleted'),
    ],
    containerStatuses: (pod.spec?.containers ?? []).map((c) => ({
      name: c.name,
      image: c.image ?? '',
      imageID: '',
      ready: false,
      started: false,
      restartCount: 0,
      state: { terminated: { exitCode: 0, reason: 'Completed', startedAt: at, finishedAt: at } },
    })),
  };
}
