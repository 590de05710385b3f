/**
 * The control plane's audit log (scripts/testbed/controlplane/cluster.ts writes one: write verbs on the
 * operator's resources, Metadata level): what a test counts a process's exact writes from.
 */
import { existsSync, readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { kubeconfig } from './kube.js';

export interface AuditEvent {
  verb: string;
  userAgent: string;
  objectRef: { resource?: string; subresource?: string; namespace?: string; name?: string };
  responseStatus?: { code?: number };
  user?: { username?: string };
}

export interface AuditLog {
  /** Completed writes logged since the mark, in one namespace, by User-Agents with this prefix. */
  writes(namespace: string, userAgentPrefix?: string): AuditEvent[];
}

/** Marks the log's current end; fails when the control plane writes none (a foreign cluster). */
export function auditLogFrom(kubeconfigPath = kubeconfig()): AuditLog {
  const path = join(dirname(kubeconfigPath), 'logs', 'audit.log');
  if (!existsSync(path))
    throw new Error(`no audit log at ${path}: this test needs a control plane started by scripts/testbed/controlplane`);
  const offset = statSync(path).size;
  return {
    writes(namespace, userAgentPrefix = 'echoperator/') {
      const text = readFileSync(path).subarray(offset).toString('utf8');
      return text
        .split('\n')
        .filter((l) => l.startsWith('{'))
        .map((l) => JSON.parse(l) as AuditEvent & { stage?: string })
        .filter((e) => e.stage === 'ResponseComplete' && e.objectRef?.namespace === namespace && e.userAgent?.startsWith(userAgentPrefix));
    },
  };
}
