/**
 * The synthesized install's objects (infra/chart.ts's Manifest: typed up to its metadata, the rest
 * as cdk8s's toJson() gives it) read as the Kubernetes type of their kind (V1Deployment, V1Service...).
 */
import type { Manifest } from '../../infra/chart.js';

/** The objects of `kind` (and `name`, `namespace` when given), as the type the caller names for that kind. */
export function manifestsOf<T = Manifest>(objs: Manifest[], kind: string, name?: string, namespace?: string): T[] {
  return objs.filter(
    (o) =>
      o.kind === kind &&
      (name === undefined || o.metadata.name === name) &&
      (namespace === undefined || o.metadata.namespace === namespace),
  ) as T[];
}
