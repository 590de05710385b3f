/**
 * Builds a CustomResourceDefinition from a kind's definition: a pure function, used by the CRD
 * generator (crds/) and by the cdk8s constructs (infra/), so both always agree with the types.
 */
import { GROUP, VERSION } from './group.js';
import type { JSONSchemaProps } from './schema.js';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'date' | 'integer' | 'number' | 'boolean';
  jsonPath: string;
  priority?: number;
  description?: string;
}

export interface KindDefinition {
  kind: string;
  plural: string;
  singular: string;
  shortNames: string[];
  schema: JSONSchemaProps;
  printerColumns: PrinterColumn[];
}

export interface CustomResourceDefinition {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels: Record<string, string> };
  spec: {
    group: string;
    names: { kind: string; listKind: string; plural: string; singular: string; shortNames: string[]; categories: string[] };
    scope: 'Namespaced';
    versions: {
      name: string;
      served: boolean;
      storage: boolean;
      schema: { openAPIV3Schema: JSONSchemaProps };
      subresources: { status: Record<string, never> };
      additionalPrinterColumns: PrinterColumn[];
    }[];
  };
}

export function crdName(def: KindDefinition): string {
  return `${def.plural}.${GROUP}`;
}

export function buildCrd(def: KindDefinition): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: crdName(def), labels: { 'app.kubernetes.io/part-of': 'echoperator' } },
    spec: {
      group: GROUP,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.plural,
        singular: def.singular,
        shortNames: def.shortNames,
        categories: ['echoperator'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: VERSION,
          served: true,
          storage: true,
          schema: { openAPIV3Schema: def.schema },
          subresources: { status: {} },
          additionalPrinterColumns: def.printerColumns,
        },
      ],
    },
  };
}
