/**
 * The add-ons some test files need beyond the cluster (Flux, Argo CD's health harness,
 * prometheus-operator, Helm, the registry, cosign and the scanner): each is a Go build of minutes
 * the first time, needed by a handful of files. `npm test` builds those not built yet in a
 * background process at the lowest CPU priority while the other files run, and puts the files that
 * need one of them last (a warm run's order is left alone); such a file waits for the build before
 * its first test (the build lock in assets.ts waits for the builder), outside any test's timeout.
 */
import { ensureArgoCdHealth, ensureFluxBinaries, ensurePrometheusOperator } from './assets.js';
import { ensureHelm } from '../../ship/helm/tool.js';
import { isCached } from '../../ship/gobuild.js';
import { ensureCosign } from '../../ship/sign/cosign.js';
import { ensureScanner } from '../scanner/scanner.js';
import { ensureRegistry } from './registry.js';

export interface AddOnBuild {
  /** Builds it when missing (waiting for a build under way), cached after. */
  ensure(log?: (line: string) => void): Promise<unknown>;
  /** Whether a test file (its path under test/) needs it. */
  neededBy(file: string): boolean;
}

const e2e = (file: string): boolean => file.includes('e2e');

export const ADD_ON_BUILDS = {
  flux: { ensure: ensureFluxBinaries, neededBy: (f: string) => f.includes('gitops') },
  argocd: { ensure: ensureArgoCdHealth, neededBy: (f: string) => e2e(f) && f.includes('argocd') },
  'prometheus-operator': { ensure: ensurePrometheusOperator, neededBy: (f: string) => e2e(f) && f.includes('servicemonitor') },
  // The chart's tests, and the release (which packs the chart).
  helm: { ensure: ensureHelm, neededBy: (f: string) => e2e(f) && /helm|release|registry/.test(f) },
  // Publishing through the test bed's registry: the registry, cosign, and the scanner that reads the pushed image.
  registry: { ensure: ensureRegistry, neededBy: (f: string) => e2e(f) && f.includes('registry') },
  cosign: { ensure: ensureCosign, neededBy: (f: string) => e2e(f) && f.includes('registry') },
  scanner: { ensure: ensureScanner, neededBy: (f: string) => e2e(f) && f.includes('registry') },
} satisfies Record<string, AddOnBuild>;

export type AddOnName = keyof typeof ADD_ON_BUILDS;

export const isAddOnName = (name: string): name is AddOnName => Object.hasOwn(ADD_ON_BUILDS, name);

/** The add-ons any of these files needs. */
export function addOnsFor(files: readonly string[]): AddOnName[] {
  return (Object.keys(ADD_ON_BUILDS) as AddOnName[]).filter((name) => files.some((f) => ADD_ON_BUILDS[name].neededBy(f)));
}

/** The add-ons any of these files needs that are not built yet. */
export async function unbuiltAddOnsFor(files: readonly string[]): Promise<AddOnName[]> {
  const unbuilt: AddOnName[] = [];
  for (const name of addOnsFor(files)) if (!(await isCached(() => ADD_ON_BUILDS[name].ensure()))) unbuilt.push(name);
  return unbuilt;
}
