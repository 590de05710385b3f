import { stringify } from 'yaml';
import { buildCrd, crdName, type CustomResourceKind } from './crd.js';

const HEADER = '# Generated from src/api by `npm run gen:crds`. Do not edit.\n';

/** The crds/ files as they must read: one CRD per file, named after the CRD. */
export function renderCrdFiles(kinds: readonly CustomResourceKind[]): { file: string; content: string }[] {
  return kinds.map((def) => ({
    file: `${crdName(def)}.yaml`,
    content: HEADER + stringify(buildCrd(def), { lineWidth: 0 }),
  }));
}
