/**
 * The Kubernetes structures of the values file (affinity, tolerations, extraEnv): exactly the
 * fields of the typed API the install is made with (infra/imports, Kubernetes 1.31), unknown
 * fields refused, as the synthesis would otherwise drop them silently.
 */
import * as k8s from './imports/k8s.js';
import { z } from 'zod';
import { int, stringMap } from './values-schema-formats.js';

const labelSelectorRequirement = z.strictObject({
  key: z.string(),
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
  values: z.array(z.string()).optional(),
});
// Named structures appear once, under definitions, as in Kubernetes' own OpenAPI.
const labelSelector = z
  .strictObject({
    matchLabels: stringMap().optional(),
    matchExpressions: z.array(labelSelectorRequirement).optional(),
  })
  .meta({ id: 'LabelSelector' });
const nodeSelectorRequirement = z.strictObject({
  key: z.string(),
  operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist', 'Gt', 'Lt']),
  values: z.array(z.string()).optional(),
});
const nodeSelectorTerm = z
  .strictObject({
    matchExpressions: z.array(nodeSelectorRequirement).optional(),
    matchFields: z.array(nodeSelectorRequirement).optional(),
  })
  .meta({ id: 'NodeSelectorTerm' });
const podAffinityTerm = z
  .strictObject({
    labelSelector: labelSelector.optional(),
    namespaceSelector: labelSelector.optional(),
    namespaces: z.array(z.string()).optional(),
    topologyKey: z.string(),
  })
  .meta({ id: 'PodAffinityTerm' });
const podAffinity = z
  .strictObject({
    requiredDuringSchedulingIgnoredDuringExecution: z.array(podAffinityTerm).optional(),
    preferredDuringSchedulingIgnoredDuringExecution: z.array(z.strictObject({ weight: int(), podAffinityTerm })).optional(),
  })
  .meta({ id: 'PodAffinity' });
export const affinity = z
  .strictObject({
    nodeAffinity: z
      .strictObject({
        requiredDuringSchedulingIgnoredDuringExecution: z.strictObject({ nodeSelectorTerms: z.array(nodeSelectorTerm) }).optional(),
        preferredDuringSchedulingIgnoredDuringExecution: z
          .array(z.strictObject({ weight: int(), preference: nodeSelectorTerm }))
          .optional(),
      })
      .optional(),
    podAffinity: podAffinity.optional(),
    podAntiAffinity: podAffinity.optional(),
  })
  .meta({
    description:
      "The pods' affinity (pod spec.affinity): nodeAffinity, podAffinity, podAntiAffinity. Unset: none (ha.enabled spreads replicas across nodes anyway).",
  });

export const toleration = z.strictObject({
  key: z.string().optional(),
  operator: z.enum(['Exists', 'Equal']).optional(),
  value: z.string().optional(),
  effect: z.enum(['NoSchedule', 'PreferNoSchedule', 'NoExecute']).optional(),
  tolerationSeconds: int().optional(),
});

const keySelector = z.strictObject({ name: z.string().optional(), key: z.string(), optional: z.boolean().optional() });
export const envVar = z.strictObject({
  name: z.string(),
  value: z.string().optional(),
  valueFrom: z
    .strictObject({
      fieldRef: z.strictObject({ apiVersion: z.string().optional(), fieldPath: z.string() }).optional(),
      resourceFieldRef: z
        .strictObject({
          containerName: z.string().optional(),
          resource: z.string(),
          divisor: z
            .string()
            .transform((q) => k8s.Quantity.fromString(q))
            .optional(),
        })
        .optional(),
      configMapKeyRef: keySelector.optional(),
      secretKeyRef: keySelector.optional(),
    })
    .optional(),
});
