/**
 * The one schema of infra/values.yaml: it validates the file (parseValues), gives its TypeScript
 * type (Values, checked against EchoperatorProps in values.ts) and, through valuesJsonSchema(),
 * the committed infra/values.schema.json (Helm's file name) that editors (yaml-language-server)
 * and CI tools read; `npm run gen:values-schema` writes it, and a unit test checks it is current.
 *
 * Library: zod 4 (pinned exactly). Chosen over TypeBox and valibot because one declaration gives
 * all three outputs with no second package: z.infer for the type, z.toJSONSchema (built in since
 * 4.0, with a draft-07 target, the draft Helm 3's validator and editors read) for the file, and
 * parse issues carrying the exact path and the expected type, from which values.ts writes errors
 * naming the key; `.transform` turns a YAML quantity string into cdk8s's Quantity while the JSON
 * Schema still describes the string the user writes (io: 'input'). TypeBox's schemas are JSON
 * Schema natively but its errors are generic and its transforms a separate codec layer; valibot
 * needs a second package for JSON Schema. zod is a build-time dependency of infra/ only: the
 * operator's bundle never imports it.
 *
 * What the schema holds: shapes, types, enums, unknown keys (refused at every level), ranges and
 * formats (ports, counts, DNS names, label keys, image references, quantities), so that
 * values.schema.json refuses a bad value in an editor or `helm lint` as the synth does. What it
 * leaves to the construct (resolveEchoperatorProps, which checks construct users' props too):
 * the rules across values (ports differ, lease timings), save two that draft-07 can say and the
 * Go chart's values.yaml needs: a ServiceMonitor needs a certificate it can verify, and
 * monitoring.port/path (the Go chart's names) hold the default unless metrics.* is set.
 * A key left empty in YAML (`image:`) means "the default", as with every other key.
 *
 * Every key carries a description (what it does, what it accepts; the meaning is infra/props.ts's)
 * and, where the synth's default is a constant, that default, taken from resolveEchoperatorProps()
 * with no props (SYNTH, in values-schema-formats.ts), so values.schema.json and the README's
 * table cannot drift from it.
 * A key whose default depends on another value or means "none" has no `default`; its description
 * says "Unset: ...". test/unit/values.test.ts checks both: every key described, and a values file
 * that writes every default resolves to exactly what an empty one does.
 *
 * The Kubernetes structures (affinity, tolerations, extraEnv) hold exactly the fields of
 * the typed API the install is made with (infra/imports, Kubernetes 1.31), which the synthesis
 * would otherwise drop silently.
 *
 * One concern a file, all exported from here:
 *  - values-schema-formats.ts: the value formats, and how a key gets its description and default;
 *  - values-schema-k8s.ts: the Kubernetes structures (affinity, tolerations, extraEnv);
 *  - values-schema-sections.ts: the maps under a top-level key (image, metrics, monitoring...);
 *  - values-schema-root.ts: VALUES_SCHEMA, every top-level key;
 *  - values-json-schema.ts: the JSON Schema written to infra/values.schema.json.
 */
export { VALUES_SCHEMA, type Values } from './values-schema-root.js';
export { VALUES_SCHEMA_FILE, valuesJsonSchema, valuesJsonSchemaText } from './values-json-schema.js';
