/**
 * One definition per custom resource: its group, version, kind, plural, schema and printer
 * columns, written once (defineCustomResource). Everything else is derived from it: the REST paths
 * (it is a ResourceType), the CRD (buildCrd: crds/ and infra/), the preflight's list of required
 * CRDs, owner references, and the operator's RBAC rules (through the controllers that use it).
 */
import type { KubeObject, ResourceType } from '../runtime/index.js';
import { GROUP, VERSION } from './group.js';
import type { JSONSchemaProps } from './schema.js';

export interface PrinterColumn {
  name: string;
  type: 'string' | 'date' | 'integer' | 'number' | 'boolean';
  jsonPath: string;
  priority?: number;
  description?: string;
}

/**
 * The columns `kubectl get` shows for the Ready condition every kind of ours carries (kstatus's
 * summary, set by src/runtime/reconcile/conditions.ts): its status and its reason, so a glance
 * tells whether an object is done and, when not, why.
 */
export function readyColumns(kind: string): PrinterColumn[] {
  const ready = '.status.conditions[?(@.type=="Ready")]';
  return [
    { name: 'Ready', type: 'string', jsonPath: `${ready}.status`, description: `Whether the ${kind} is Ready: True, False or Unknown.` },
    {
      name: 'Reason',
      type: 'string',
      jsonPath: `${ready}.reason`,
      description: `Why the ${kind} is Ready or not (the Ready condition's reason).`,
    },
  ];
}

/** A custom resource of our API group: a namespaced ResourceType of T with what its CRD needs. */
export interface CustomResourceKind<T extends KubeObject = KubeObject> extends ResourceType<T> {
  /** The plural, lower case: the REST path segment and the CRD's names.plural. */
  resource: string;
  singular: string;
  shortNames: string[];
  schema: JSONSchemaProps;
  printerColumns: PrinterColumn[];
}

/**
 * Defines a custom resource of our group and version (namespaced, with a status subresource),
 * whose objects are Ts.
 */
export function defineCustomResource<T extends KubeObject>(
  def: Omit<CustomResourceKind<T>, 'group' | 'version' | 'namespaced' | '__object' | '__fields'>,
): CustomResourceKind<T> {
  return { group: GROUP, version: VERSION, namespaced: true, ...def };
}

/** Whether a kind is one of ours with a CRD to install (defineCustomResource's), not a built-in. */
export function isCustomResourceKind(type: ResourceType): type is CustomResourceKind {
  return 'schema' in type && 'printerColumns' in type;
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

export function crdName(def: CustomResourceKind): string {
  return `${def.resource}.${def.group}`;
}

export function buildCrd(def: CustomResourceKind): CustomResourceDefinition {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: crdName(def), labels: { 'app.kubernetes.io/part-of': 'echoperator' } },
    spec: {
      group: def.group,
      names: {
        kind: def.kind,
        listKind: `${def.kind}List`,
        plural: def.resource,
        singular: def.singular,
        shortNames: def.shortNames,
        categories: ['echoperator'],
      },
      scope: 'Namespaced',
      versions: [
        {
          name: def.version,
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
