/**
 * OpenAPI v3 pieces shared by the CRDs. A schema here is the single source of truth: the CRD
 * YAML in crds/ and the cdk8s constructs are generated from it, and the TypeScript types beside
 * it describe the same shape.
 */
export interface JSONSchemaProps {
  type?: 'object' | 'string' | 'integer' | 'array' | 'boolean' | 'number';
  description?: string;
  format?: string;
  enum?: string[];
  minLength?: number;
  maxLength?: number;
  minimum?: number;
  maxItems?: number;
  pattern?: string;
  required?: string[];
  properties?: Record<string, JSONSchemaProps>;
  items?: JSONSchemaProps;
  'x-kubernetes-list-type'?: 'map' | 'set' | 'atomic';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-validations'?: { rule: string; message: string; messageExpression?: string }[];
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  default?: unknown;
}

/** metav1.Condition, as every Kubernetes API documents it. */
export const conditionSchema: JSONSchemaProps = {
  type: 'object',
  description: 'One aspect of the current state of the resource (metav1.Condition).',
  required: ['type', 'status', 'lastTransitionTime', 'reason', 'message'],
  properties: {
    type: { type: 'string', description: 'Type of condition in CamelCase, e.g. Ready; one condition per type.', maxLength: 316 },
    status: { type: 'string', enum: ['True', 'False', 'Unknown'], description: 'Whether the condition holds: True, False or Unknown.' },
    observedGeneration: {
      type: 'integer',
      format: 'int64',
      minimum: 0,
      description: 'The metadata.generation the condition was set from; older than metadata.generation: it may be out of date.',
    },
    lastTransitionTime: {
      type: 'string',
      format: 'date-time',
      description: 'When status last changed (from True to False, say); a new reason or message alone does not move it.',
    },
    reason: { type: 'string', maxLength: 1024, description: 'Why the condition has this status, as a CamelCase word for programs.' },
    message: { type: 'string', maxLength: 32768, description: 'Why the condition has this status, for humans.' },
  },
};

/** The conditions of a kind, whose types (and what each means) `description` lists. */
function conditionsSchema(description: string): JSONSchemaProps {
  return {
    type: 'array',
    description,
    items: conditionSchema,
    maxItems: 16,
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
  };
}

export const observedGenerationSchema: JSONSchemaProps = {
  type: 'integer',
  format: 'int64',
  description:
    'The metadata.generation this status describes; lower than metadata.generation while the operator has not yet acted on the latest spec (0 until its first pass).',
};

/**
 * The schema of a whole custom resource: the standard top-level fields, a required spec, and a
 * status whose observedGeneration and conditions every kind of ours carries.
 */
export function customResourceSchema(parts: {
  description: string;
  spec: JSONSchemaProps;
  statusDescription: string;
  status: Record<string, JSONSchemaProps>;
  /** What status.conditions holds: each condition type the operator sets, and when. */
  conditionsDescription: string;
}): JSONSchemaProps {
  return {
    type: 'object',
    description: parts.description,
    required: ['spec'],
    properties: {
      // The standard wording (kubebuilder's, from the Kubernetes API conventions).
      apiVersion: {
        type: 'string',
        description:
          'APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources',
      },
      kind: {
        type: 'string',
        description:
          'Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds',
      },
      // Nothing but the type: the API server refuses a CRD whose schema says more of metadata (a
      // description included), and `kubectl explain` describes it from ObjectMeta anyway.
      metadata: { type: 'object' },
      spec: parts.spec,
      status: {
        type: 'object',
        description: parts.statusDescription,
        properties: {
          ...parts.status,
          observedGeneration: observedGenerationSchema,
          conditions: conditionsSchema(parts.conditionsDescription),
        },
        // The API server fills this in on every read of an object whose status the operator has
        // not written yet, so kstatus (Flux's health checks) reads generation 1 > observed 0 as
        // InProgress from the first look. Without it, an object with no status at all reads as
        // Current: a Kustomization applying an Echo could be Ready before the operator saw it.
        default: { observedGeneration: 0 },
      },
    },
  };
}

export const MESSAGE_MAX_LENGTH = 4096;

/** The message both kinds echo. Bounded so a resource cannot carry megabytes into a Pod spec. */
export const messageSchema: JSONSchemaProps = {
  type: 'string',
  description: `Text printed by the run, literally (no shell). 1 to ${MESSAGE_MAX_LENGTH} characters.`,
  minLength: 1,
  maxLength: MESSAGE_MAX_LENGTH,
  // The message becomes a program argument (printf's), and no argument can hold a NUL: the
  // server would store the Job, but the container runtime could never start it. Refuse it here.
  'x-kubernetes-validations': [
    { rule: "!self.contains('\\u0000')", message: 'must not contain the NUL character (a program argument cannot hold it)' },
  ],
};

export type { Condition, ObjectMeta } from '../runtime/index.js';
