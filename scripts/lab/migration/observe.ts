/**
 * What the switch is measured from, all read from the cluster itself:
 *  - every line any pod printed, read from the node's container log files while the pods run
 *    (a Job the garbage collector deletes takes its pod and `kubectl logs` with it; the file is
 *    read before the kubelet removes it);
 *  - every write to Echos, ScheduledEchos, Jobs, CronJobs and Events, with who made it, from the
 *    control plane's audit log (scripts/testbed/controlplane/cluster.ts writes one);
 *  - the Jobs, CronJobs and Events as the API server lists them.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { V1CronJob, V1Job, CoreV1Event } from '@kubernetes/client-node';
import type { Kubectl } from '../../testbed/kubectl.js';

/** One container's output: namespace, pod, container and the lines it printed (stdout and stderr). */
export interface Printed {
  namespace: string;
  pod: string;
  container: string;
  lines: string[];
}

/**
 * Polls the kubelet's pod log folder (`<namespace>_<pod>_<uid>/<container>/<restart>.log`, CRI
 * format: `<time> <stream> <F|P> <text>`) every second; what a file held when last read is kept
 * after the kubelet removes it.
 */
export class PrintedLines {
  private readonly seen = new Map<string, Printed>();
  private readonly timer: NodeJS.Timeout;

  constructor(private readonly podLogsDir: string) {
    this.timer = setInterval(() => this.scan(), 1000);
  }

  scan(): void {
    if (!existsSync(this.podLogsDir)) return;
    for (const podDir of readdirSync(this.podLogsDir)) {
      const [namespace, pod] = podDir.split('_');
      for (const container of safeList(join(this.podLogsDir, podDir))) {
        for (const file of safeList(join(this.podLogsDir, podDir, container))) {
          const path = join(this.podLogsDir, podDir, container, file);
          let text: string;
          try {
            if (!statSync(path).isFile()) continue;
            text = readFileSync(path, 'utf8');
          } catch {
            continue; // removed between the listing and the read
          }
          const lines = text
            .split('\n')
            .filter(Boolean)
            .map((l) => l.split(' ').slice(3).join(' '));
          this.seen.set(path, { namespace: namespace!, pod: pod!, container, lines });
        }
      }
    }
  }

  /** Everything printed so far, in pods of `namespaces` (all when absent). */
  all(namespaces?: string[]): Printed[] {
    this.scan();
    return [...this.seen.values()].filter((p) => !namespaces || namespaces.includes(p.namespace));
  }

  stop(): void {
    clearInterval(this.timer);
  }
}

function safeList(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

export interface AuditEntry {
  verb: string;
  resource: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  user: string;
  userAgent: string;
  code?: number;
  at: string;
}

/** The audit log from its current end: completed writes logged after this mark. */
export function auditFromNow(clusterDir: string): () => AuditEntry[] {
  const path = join(clusterDir, 'logs', 'audit.log');
  const offset = existsSync(path) ? statSync(path).size : 0;
  return () =>
    readFileSync(path)
      .subarray(offset)
      .toString('utf8')
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map(
        (l) =>
          JSON.parse(l) as {
            stage?: string;
            verb: string;
            objectRef?: { resource?: string; subresource?: string; namespace?: string; name?: string };
            user?: { username?: string };
            userAgent?: string;
            responseStatus?: { code?: number };
            stageTimestamp?: string;
          },
      )
      .filter((e) => e.stage === 'ResponseComplete' && e.objectRef?.resource)
      .map((e) => ({
        verb: e.verb,
        resource: e.objectRef!.resource!,
        subresource: e.objectRef!.subresource,
        namespace: e.objectRef!.namespace,
        name: e.objectRef!.name,
        user: e.user?.username ?? '',
        userAgent: e.userAgent ?? '',
        code: e.responseStatus?.code,
        at: e.stageTimestamp ?? '',
      }));
}

/** A Job or CronJob as the report shows it: where it is, who controls it, who wrote it. */
export interface OwnedSummary {
  namespace: string;
  name: string;
  uid: string;
  controller?: string;
  controllerUid?: string;
  managers: string[];
  labels: Record<string, string>;
}

function summary(o: V1Job | V1CronJob): OwnedSummary {
  const ref = o.metadata?.ownerReferences?.find((r) => r.controller);
  return {
    namespace: o.metadata!.namespace!,
    name: o.metadata!.name!,
    uid: o.metadata!.uid!,
    controller: ref ? `${ref.kind}/${ref.name}` : undefined,
    controllerUid: ref?.uid,
    managers: [
      ...new Set((o.metadata?.managedFields ?? []).map((m) => `${m.manager}:${m.operation}${m.subresource ? `/${m.subresource}` : ''}`)),
    ],
    labels: o.metadata?.labels ?? {},
  };
}

export interface JobSummary extends OwnedSummary {
  succeeded: number;
  /** The pod's containers: name and command. */
  containers: { name: string; command: string[] }[];
}

export function jobs(k: Kubectl): JobSummary[] {
  return k.json<{ items: V1Job[] }>(['get', 'jobs', '-A', '-o', 'json']).items.map((j) => ({
    ...summary(j),
    succeeded: j.status?.succeeded ?? 0,
    containers: (j.spec?.template.spec?.containers ?? []).map((c) => ({ name: c.name, command: c.command ?? [] })),
  }));
}

export interface CronJobSummary extends OwnedSummary {
  schedule: string;
  timeZone?: string;
  containers: { name: string; command: string[] }[];
  lastScheduleTime?: string;
}

export function cronJobs(k: Kubectl): CronJobSummary[] {
  return k.json<{ items: V1CronJob[] }>(['get', 'cronjobs', '-A', '-o', 'json']).items.map((c) => ({
    ...summary(c),
    schedule: c.spec.schedule,
    timeZone: c.spec.timeZone,
    containers: (c.spec?.jobTemplate.spec?.template.spec?.containers ?? []).map((x) => ({ name: x.name, command: x.command ?? [] })),
    lastScheduleTime: c.status?.lastScheduleTime as unknown as string | undefined,
  }));
}

export interface EventSummary {
  namespace: string;
  object: string;
  reason: string;
  message: string;
  source: string;
  count: number;
}

export function events(k: Kubectl): EventSummary[] {
  return k.json<{ items: CoreV1Event[] }>(['get', 'events', '-A', '-o', 'json']).items.map((e) => ({
    namespace: e.metadata.namespace!,
    object: `${e.involvedObject.kind}/${e.involvedObject.name}`,
    reason: e.reason ?? '',
    message: e.message ?? '',
    source: e.reportingComponent || e.source?.component || '',
    count: e.count ?? 1,
  }));
}
