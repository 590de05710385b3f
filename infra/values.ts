/**
 * infra/values.yaml -> EchoperatorProps, with the one environment override: ECHOPERATOR_HA.
 * The file is checked against VALUES_SCHEMA (infra/values-schema.ts, the one schema behind
 * infra/values.schema.json too): unknown keys and wrongly shaped values are errors naming the key
 * (`tolerations[0].effect`), so a typo cannot silently fall back to a default. The values keep
 * Helm's and the Go echoperator chart's names (image.repository, ha.replicaCount, numWorkers,
 * nameOverride...); valuesToProps maps them onto the construct's props, and a key renamed in
 * 0.1.0 is refused naming its new name.
 */
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import type { z } from 'zod';
import {
  DEFAULTS,
  ECHOPERATOR_VERSION,
  EchoperatorPropsError,
  IMAGE_REPOSITORY,
  NAME_MAX_LENGTH,
  resolveEchoperatorProps,
  type EchoperatorProps,
} from './echoperator.js';
import { applySetArgument, mergeValues } from './set-values.js';
import { VALUES_SCHEMA, type Values } from './values-schema.js';

export const VALUES_FILE = new URL('./values.yaml', import.meta.url);

/** Overrides values.yaml's ha.enabled for one synth: 'true' or 'false' (empty = unset). */
export const HA_ENV = 'ECHOPERATOR_HA';

export class ValuesError extends Error {
  override readonly name = 'ValuesError';
}

/** The release name of `npm run synth` unless --release-name says otherwise (Helm: the release's name). */
export const DEFAULT_RELEASE_NAME = 'echoperator';
/** The chart's name: app.kubernetes.io/name unless nameOverride is set. */
const CHART_NAME = 'echoperator';
/** Helm's limit on a release name (helm/pkg/chartutil.ValidateReleaseName), and its pattern. */
const RELEASE_NAME_MAX_LENGTH = 53;
const RELEASE_NAME = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

/**
 * The Go echoperator's published images (Docker Hub, then GHCR): its chart's values.yaml names the
 * first, and an install running either would crash-loop on this install's settings.
 */
export const GO_ECHOPERATOR_IMAGES: readonly string[] = ['mmontes11/echoperator', 'ghcr.io/mmontes11/echoperator'];

/** Keys of earlier values files, refused with their new name rather than as unknown keys. */
const RENAMED_KEYS: Record<string, string> = {
  name: 'nameOverride / fullnameOverride',
  workers: 'numWorkers',
  imagePullPolicy: 'image.pullPolicy',
  'ha.replicas': 'ha.replicaCount',
  'ha.leaseDurationSeconds': 'ha.leaderElection.leaseDurationSeconds',
  'ha.renewDeadlineSeconds': 'ha.leaderElection.renewDeadlineSeconds',
  'ha.retryPeriodSeconds': 'ha.leaderElection.retryPeriodSeconds',
  'ha.leaseName': 'ha.leaderElection.leaseName',
  installCrds: 'crds.enabled',
};

/** Refuses a renamed key and the string form of image, saying what to write instead. */
function refuseRenamedKeys(doc: Record<string, unknown>, source: string): void {
  const problems: string[] = [];
  if (typeof doc.image === 'string') problems.push('image is a map now: image.repository, image.tag, image.digest');
  for (const [old, now] of Object.entries(RENAMED_KEYS)) {
    const dot = old.indexOf('.');
    const holder = dot < 0 ? doc : doc[old.slice(0, dot)];
    if (holder && typeof holder === 'object' && old.slice(dot + 1) in holder) problems.push(`${old} is ${now} now`);
  }
  if (problems.length) throw new ValuesError(`${source}: ${problems.join('; ')}`);
}

/** Helm's `trunc 63 | trimSuffix "-"`. */
const helmTrunc = (s: string): string => {
  const cut = s.slice(0, 63);
  return cut.endsWith('-') ? cut.slice(0, -1) : cut;
};

/**
 * The names Helm's scaffold (`helm create`) gives a chart's objects, which the Helm chart's
 * templates compute too: `name` (app.kubernetes.io/name) is nameOverride or the chart's name;
 * `fullname` (every object's name) is fullnameOverride, or the release name when it contains the
 * name, or `<release>-<name>`, cut to 63 characters; and it must leave room for our suffixes.
 */
export function helmNames(
  releaseName: string,
  nameOverride: string | undefined,
  fullnameOverride: string | undefined,
): { name: string; fullname: string } {
  if (releaseName.length > RELEASE_NAME_MAX_LENGTH || !RELEASE_NAME.test(releaseName)) {
    throw new ValuesError(
      `the release name must be at most ${RELEASE_NAME_MAX_LENGTH} lower-case letters, digits, '-' and '.' (as Helm's), got ${JSON.stringify(releaseName)}`,
    );
  }
  const name = helmTrunc(nameOverride || CHART_NAME);
  const fullname = helmTrunc(fullnameOverride || (releaseName.includes(name) ? releaseName : `${releaseName}-${name}`));
  if (fullname.length > NAME_MAX_LENGTH || !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(fullname)) {
    const from = fullnameOverride
      ? 'fullnameOverride'
      : `the release name ${JSON.stringify(releaseName)} and nameOverride ${JSON.stringify(name)}`;
    throw new ValuesError(
      `the objects' name ${JSON.stringify(fullname)} (from ${from}) must be a DNS label of at most ${NAME_MAX_LENGTH} characters, ` +
        "leaving room for the '-config' and '-metrics' suffixes: set fullnameOverride",
    );
  }
  return { name, fullname };
}

/** image.{repository,tag,digest} as one reference: `repository@digest` when a digest is set, else `repository:tag`. */
function imageReference(image: Values['image']): string | undefined {
  if (image?.repository === undefined && !image?.tag && !image?.digest) return undefined;
  const repository = image.repository ?? IMAGE_REPOSITORY;
  return image.digest ? `${repository}@${image.digest}` : `${repository}:${image.tag || ECHOPERATOR_VERSION}`;
}

/** The Go chart's image.repository names the Go program, which cannot run this install: refused, saying what to set. */
function goImageProblems(v: Values): string[] {
  const repository = v.image?.repository;
  if (repository === undefined || !GO_ECHOPERATOR_IMAGES.includes(repository.replace(/^docker\.io\//, ''))) return [];
  return [
    `image.repository ${repository} is the Go echoperator's image, which cannot run this install ` +
      `(another program with other settings); leave image.repository unset for ${IMAGE_REPOSITORY}, ` +
      'or name a copy of that image (docs/migrating.md)',
  ];
}

/**
 * monitoring.path and monitoring.port are the Go chart's names for metrics.path and metrics.port:
 * accepted when they say the same, refused otherwise (one endpoint, one setting).
 */
function goChartAliasProblems(v: Values): string[] {
  const aliases = [
    ['port', v.monitoring?.port, v.metrics?.port ?? DEFAULTS.metrics.port],
    ['path', v.monitoring?.path, v.metrics?.path ?? DEFAULTS.metrics.path],
  ] as const;
  return aliases.flatMap(([key, alias, metrics]) =>
    alias !== undefined && alias !== metrics
      ? [
          `monitoring.${key} is the Go chart's name for metrics.${key}; set metrics.${key} ` +
            `(monitoring.${key} is ${JSON.stringify(alias)}, metrics.${key} ${JSON.stringify(metrics)})`,
        ]
      : [],
  );
}

/** Every prop, each either mapped from the values or said to have no values key: a new prop cannot be forgotten. */
type MappedProps = { [K in keyof Required<EchoperatorProps>]: EchoperatorProps[K] | undefined };

/**
 * The construct's props for a checked values document and a release name: the one place where
 * a values key and its prop differ in name or shape (the values' names are Helm's and the Go
 * chart's; the props keep the construct's). Keys left out are undefined: the construct's default.
 * A refusal gives every reason at once (the Go chart's values.yaml has two: its image and its
 * unverifiable ServiceMonitor), not one per try.
 */
export function valuesToProps(v: Values, releaseName: string = DEFAULT_RELEASE_NAME, source = 'values.yaml'): EchoperatorProps {
  const problems = [...goImageProblems(v), ...goChartAliasProblems(v)];
  const { name, fullname } = helmNames(releaseName, v.nameOverride, v.fullnameOverride);
  const { path: _path, port: _port, ...monitoring } = v.monitoring ?? {};
  const leaderElection = v.ha?.leaderElection;
  const props: MappedProps = {
    namespace: v.namespace,
    createNamespace: v.createNamespace,
    crds: v.crds,
    // Each only where it differs from the construct's default (name and appName 'echoperator',
    // instance = name), so that the default release's props stay empty.
    name: fullname === DEFAULTS.name ? undefined : fullname,
    appName: name === DEFAULTS.name ? undefined : name,
    instance: releaseName === fullname ? undefined : releaseName,
    image: imageReference(v.image),
    imagePullPolicy: v.image?.pullPolicy,
    command: v.command,
    args: v.args,
    workers: v.numWorkers,
    watchNamespaces: v.watchNamespaces,
    logLevel: v.logLevel,
    logFormat: v.env === undefined ? undefined : v.env === 'local' ? 'text' : 'json',
    metrics: v.metrics,
    monitoring: v.monitoring && monitoring,
    healthPort: v.healthPort,
    resources: v.resources,
    jobImage: v.jobImage,
    jobMaxResources: v.jobMaxResources,
    ha: v.ha && { enabled: v.ha.enabled, replicas: v.ha.replicaCount, ...leaderElection },
    terminationGracePeriodSeconds: v.terminationGracePeriodSeconds,
    confineServiceAccount: v.confineServiceAccount,
    tenantRoles: v.tenantRoles,
    // Construct users' extra labels: no values key (podLabels label the pods).
    labels: undefined,
    nodeSelector: v.nodeSelector,
    tolerations: v.tolerations,
    affinity: v.affinity,
    priorityClassName: v.priorityClassName,
    imagePullSecrets: v.imagePullSecrets,
    podAnnotations: v.podAnnotations,
    podLabels: v.podLabels,
    extraEnv: v.extraEnv,
  };
  const mapped = dropUndefined(props) as EchoperatorProps;
  if (problems.length) {
    const more = propsProblem(mapped);
    throw new ValuesError(`${source}: ${[...problems, ...(more === undefined ? [] : [more])].join('; ')}`);
  }
  return mapped;
}

const EXPECTED: Record<string, string> = {
  string: 'a string',
  boolean: 'true or false',
  number: 'an integer',
  int: 'an integer',
  array: 'a list',
  object: 'a mapping',
  record: 'a mapping',
};

/** `ha.enabled`, `tolerations[0].effect`, `nodeSelector["kubernetes.io/os"]`. */
function keyPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const k of path) {
    if (typeof k === 'number') out += `[${k}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_]*$/.test(String(k))) out += out ? `.${String(k)}` : String(k);
    else out += `[${JSON.stringify(String(k))}]`;
  }
  return out || 'the file';
}

function describe(issue: z.core.$ZodIssue): string {
  const got = 'input' in issue && issue.input !== undefined ? `, got ${JSON.stringify(issue.input)}` : '';
  switch (issue.code) {
    case 'unrecognized_keys':
      return issue.keys.map((k) => `unknown key ${keyPath([...issue.path, k])}`).join('; ');
    case 'invalid_type':
      return `${keyPath(issue.path)} must be ${EXPECTED[issue.expected] ?? issue.expected}${got}`;
    case 'invalid_value':
      return `${keyPath(issue.path)} must be one of ${issue.values.map(String).join(', ')}${got}`;
    default:
      return `${keyPath(issue.path)}: ${issue.message}${got}`;
  }
}

/** Drops keys whose value is undefined (an empty key in YAML), so the props hold only what was set. */
function dropUndefined(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(dropUndefined);
  if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    return Object.fromEntries(
      Object.entries(v)
        .filter(([, x]) => x !== undefined)
        .map(([k, x]) => [k, dropUndefined(x)]),
    );
  }
  return v;
}

/** The YAML text of a values file as a map (an empty file is an empty map). */
function valuesDocument(text: string, source: string): Record<string, unknown> {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (err) {
    throw new ValuesError(`${source}: not valid YAML: ${(err as Error).message}`);
  }
  if (doc === null || doc === undefined) return {};
  if (typeof doc !== 'object' || Array.isArray(doc)) throw new ValuesError(`${source}: must be a mapping of keys to values`);
  return doc as Record<string, unknown>;
}

/** Checks a values document against the schema and maps it to props; `source` names where it came from in errors. */
function validValues(doc: Record<string, unknown>, source: string, releaseName: string): EchoperatorProps {
  refuseRenamedKeys(doc, source);
  const result = VALUES_SCHEMA.safeParse(doc, { reportInput: true });
  if (!result.success) throw new ValuesError(`${source}: ${result.error.issues.map(describe).join('; ')}`);
  return valuesToProps(result.data, releaseName, source);
}

/** Parses values YAML text into props; `source` names the file in errors. */
export function parseValues(text: string, source = 'values.yaml', releaseName: string = DEFAULT_RELEASE_NAME): EchoperatorProps {
  return validValues(valuesDocument(text, source), source, releaseName);
}

/** Where the values of one synth come from, in Helm's order of precedence (later wins). */
export interface ValuesSources {
  /** Values files merged in order over infra/values.yaml, as `helm -f a.yaml -f b.yaml`. */
  readonly files?: readonly string[];
  /** `--set` arguments, applied in order over the files (Helm's syntax: infra/set-values.ts). */
  readonly set?: readonly string[];
  /** `--set-string` arguments, applied after the `--set` ones; every value a string. */
  readonly setString?: readonly string[];
  /** The release name (Helm's): app.kubernetes.io/instance, and the objects' names. */
  readonly releaseName?: string;
}

/**
 * The props of one synth: infra/values.yaml, the files merged over it, the --set and --set-string
 * arguments applied, then ECHOPERATOR_HA; checked once, on the result, as Helm checks
 * values.schema.json against the merged values.
 */
export function valuesFromSources(sources: ValuesSources, env: NodeJS.ProcessEnv = process.env): EchoperatorProps {
  let values = valuesDocument(readFileSync(VALUES_FILE, 'utf8'), VALUES_FILE.pathname);
  for (const file of sources.files ?? []) values = mergeValues(values, valuesDocument(readFileSync(file, 'utf8'), file));
  for (const expression of sources.set ?? []) values = applySetArgument(values, expression);
  for (const expression of sources.setString ?? []) values = applySetArgument(values, expression, true);
  const named = [...(sources.files ?? []), ...(sources.set?.length || sources.setString?.length ? ['--set'] : [])];
  const source = named.length ? named.join(', ') : VALUES_FILE.pathname;
  return withValuesKeys(applyEnvOverrides(validValues(values, source, sources.releaseName ?? DEFAULT_RELEASE_NAME), env), source);
}

/**
 * Checks the props as the construct will (the rules across values, e.g. the lease timings), and
 * words a refusal with the values' keys, not the props' (ha.leaderElection.leaseDurationSeconds,
 * not ha.leaseDurationSeconds): the user wrote the former. Undefined when the props resolve.
 */
function propsProblem(props: EchoperatorProps): string | undefined {
  try {
    resolveEchoperatorProps(props);
  } catch (err) {
    if (!(err instanceof EchoperatorPropsError)) throw err;
    let message = err.message.replace(/^Echoperator: /, '');
    // The renamed keys are the props' names: each becomes the values key it was renamed to.
    for (const [prop, valuesKey] of Object.entries(RENAMED_KEYS)) {
      if (prop === 'name' || prop === 'imagePullPolicy') continue; // names and the image are checked in valuesToProps
      message = message.replace(new RegExp(`(?<![\\w.])${prop.replace('.', '\\.')}(?![\\w])`, 'g'), valuesKey);
    }
    return message;
  }
  return undefined;
}

/** The props, or a ValuesError naming the values keys (propsProblem). */
function withValuesKeys(props: EchoperatorProps, source: string): EchoperatorProps {
  const problem = propsProblem(props);
  if (problem !== undefined) throw new ValuesError(`${source}: ${problem}`);
  return props;
}

/** Applies ECHOPERATOR_HA (when set and non-empty) over the values' ha.enabled. */
export function applyEnvOverrides(props: EchoperatorProps, env: NodeJS.ProcessEnv = process.env): EchoperatorProps {
  const raw = env[HA_ENV]?.trim();
  if (raw === undefined || raw === '') return props;
  if (raw !== 'true' && raw !== 'false') {
    throw new ValuesError(`${HA_ENV} must be true or false, got ${JSON.stringify(raw)}`);
  }
  return { ...props, ha: { ...props.ha, enabled: raw === 'true' } };
}

/** The props of the install: infra/values.yaml (or `file`) plus the environment override. */
export function loadValues(file: string | URL = VALUES_FILE, env: NodeJS.ProcessEnv = process.env): EchoperatorProps {
  const source = typeof file === 'string' ? file : file.pathname;
  return applyEnvOverrides(parseValues(readFileSync(file, 'utf8'), source), env);
}
