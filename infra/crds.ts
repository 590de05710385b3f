/**
 * The Echo and ScheduledEcho CRDs as the install carries them: src/api's (the same objects as
 * crds/), with, when kept, Helm's `helm.sh/resource-policy: keep`. Helm then never deletes them:
 * not at `helm uninstall`, not at a `helm rollback` or `helm upgrade` to a release whose manifest
 * lacks them (Helm reads the annotation on the live object). Deleting a CRD deletes every Echo and
 * ScheduledEcho in the cluster, so an install that owns them keeps them unless told otherwise.
 * The synth writes the same annotation, so that `helm template` and `npm run synth` give one set
 * of objects; kubectl and Flux ignore it (a GitOps tool keeps them by syncing them with pruning
 * off, docs/gitops.md).
 */
import { buildCrd, type CustomResourceDefinition } from '../src/api/crd.js';
import { CUSTOM_RESOURCES } from '../src/controllers/index.js';

/** Helm's annotation, and the value, that stop it deleting an object its release no longer renders. */
export const KEEP_ANNOTATION = { 'helm.sh/resource-policy': 'keep' } as const;

/** A CRD as installed: src/api's, with annotations when kept. */
export type InstalledCrd = CustomResourceDefinition & { metadata: { annotations?: Record<string, string> } };

/** The CRDs of the install, `keep` adding KEEP_ANNOTATION. */
export function installedCrds(keep: boolean): InstalledCrd[] {
  return CUSTOM_RESOURCES.map(buildCrd).map((crd) =>
    keep ? { ...crd, metadata: { ...crd.metadata, annotations: { ...KEEP_ANNOTATION } } } : crd,
  );
}
