/**
 * Turns the command line and the environment into Settings, or into one clear error.
 *
 * Precedence, per setting: flag, else environment variable (an empty one counts as unset), else
 * default. Every value goes through the parser of its row in SETTINGS, so an invalid value is
 * refused the same way whichever source it came from, and the message names the environment
 * variable, the flag, the value and what is accepted.
 *
 * Why commander's Option.env() is not used: commander reads process.env itself, so settings could
 * not be parsed from an environment given as an argument (tests, or a wrapper resolving its own
 * environment). The environment variable still shows in --help, through the help formatter.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { Command, CommanderError, Help, Option } from 'commander';
import { brokenLeaseRule, JITTER_FACTOR, LEASE_DEFAULT_SECONDS, redactText } from '../runtime/index.js';
import { API_VERSION } from '../api/group.js';
import { VERSION } from '../version.js';
import { InvalidValue, boolean } from './parsers.js';
import { SETTINGS, type DefaultContext, type SettingSpec, type Settings } from './settings.js';

/** Settings could not be produced; the process must exit with exitCode and print message if any. */
export class SettingsError extends Error {
  override readonly name = 'SettingsError';
  constructor(
    message: string,
    /** 2 = invalid usage or value; 0 = --help or --version, already printed. */
    readonly exitCode = 2,
  ) {
    super(message);
  }
}

export interface ParseOptions extends Partial<Omit<DefaultContext, 'env'>> {
  /** Where --help and --version print; default stdout. */
  writeOut?: (text: string) => void;
  /** The kinds the operator reconciles, which --help names (the application's, not this table's). */
  kinds?: readonly { kind: string }[];
}

type Key = keyof Settings;
const KEYS = Object.keys(SETTINGS) as Key[];

/**
 * Parses argv (the arguments after the script, i.e. process.argv.slice(2)) and env. Never exits
 * and never prints except for --help / --version (to writeOut); throws SettingsError instead.
 */
export function parseSettings(argv: readonly string[], env: NodeJS.ProcessEnv, options: ParseOptions = {}): Settings {
  const ctx: DefaultContext = {
    env,
    hostname: options.hostname ?? hostname,
    randomHex: options.randomHex ?? ((n) => randomBytes(n).toString('hex')),
    inClusterNamespace: options.inClusterNamespace ?? readInClusterNamespace,
  };
  const { program, optionOf } = buildCommand(options.writeOut ?? ((s) => process.stdout.write(s)), options.kinds ?? []);
  try {
    program.parse([...argv], { from: 'user' });
  } catch (err) {
    if (err instanceof SettingsError) throw err;
    if (err instanceof CommanderError) {
      if (err.exitCode === 0) throw new SettingsError('', 0);
      throw new SettingsError(err.message.replace(/^error:\s*/, ''));
    }
    throw err;
  }
  const fromCli = program.opts();
  const values: Record<string, unknown> = {};
  for (const key of KEYS) {
    const spec = SETTINGS[key] as SettingSpec<unknown>;
    const attribute = optionOf(key).attributeName();
    if (program.getOptionValueSource(attribute) === 'cli') {
      values[key] = fromCli[attribute];
      continue;
    }
    const raw = env[spec.env];
    if (raw !== undefined && raw.trim() !== '') {
      values[key] = parseValue(spec, raw);
    } else if (typeof spec.default === 'function') {
      // A computed default comes from outside (POD_NAMESPACE, the hostname): check it as well.
      values[key] = parseValue(spec, String((spec.default as (c: DefaultContext) => unknown)(ctx)), 'default');
    } else {
      values[key] = spec.default;
    }
  }
  const settings = values as unknown as Settings;
  if (settings.logFormat === 'auto' && env.ENV?.trim() === 'local') settings.logFormat = 'text';
  crossCheck(settings);
  return settings;
}

/**
 * For main: parseSettings, and on SettingsError print `error: ...` to stderr and exit with its
 * code (2 for a bad value, 0 after --help / --version). Never returns on failure.
 */
export function parseSettingsOrExit(
  argv: readonly string[] = process.argv.slice(2),
  env: NodeJS.ProcessEnv = process.env,
  options: ParseOptions = {},
): Settings {
  try {
    return parseSettings(argv, env, options);
  } catch (err) {
    if (!(err instanceof SettingsError)) throw err;
    if (err.message) process.stderr.write(`error: ${err.message}\n(see --help for every setting)\n`);
    process.exit(err.exitCode);
  }
}

/**
 * The message of an invalid value; exported so other parts can refuse values the same way. A URL
 * password in the value (a URL given to the wrong setting) is not repeated (kube/redact.ts).
 */
export function invalidValueMessage(spec: SettingSpec<unknown>, raw: string, detail?: string, source?: 'default'): string {
  const origin = source === 'default' ? ' (computed default)' : '';
  return redactText(
    `invalid ${spec.env} (${spec.flag}) ${JSON.stringify(raw)}${origin}: expected ${spec.parser.accepts}${detail ? `; ${detail}` : ''}`,
  );
}

function parseValue<T>(spec: SettingSpec<T>, raw: string, source?: 'default'): T {
  try {
    return spec.parser.parse(raw.trim());
  } catch (err) {
    if (err instanceof InvalidValue) throw new SettingsError(invalidValueMessage(spec, raw, err.detail, source));
    throw err;
  }
}

/** "A", "A and B", "A, B and C". */
function listed(names: readonly string[]): string {
  return names.length < 2 ? names.join('') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`;
}

function buildCommand(
  writeOut: (text: string) => void,
  kinds: readonly { kind: string }[],
): { program: Command; optionOf: (key: Key) => Option } {
  const program = new Command('echoperator');
  const options = new Map<Key, Option>();
  const specOf = new Map<Option, SettingSpec<unknown>>();
  program
    .description(`Kubernetes operator${kinds.length ? ` for ${listed(kinds.map((k) => k.kind))}` : ''} (${API_VERSION}).`)
    .version(VERSION, '-V, --version', 'print the version and exit')
    .helpOption('-h, --help', 'show every setting with its environment variable and default')
    .allowExcessArguments(false)
    .exitOverride()
    // Errors are rethrown as SettingsError and printed once, by the caller.
    .configureOutput({ writeOut, writeErr: () => {}, outputError: () => {} })
    .configureHelp({
      optionDescription(this: Help, option: Option): string {
        const spec = specOf.get(option);
        if (!spec) return Help.prototype.optionDescription.call(this, option);
        return `${spec.description} [${spec.parser.accepts}] (env: ${spec.env}, default: ${spec.defaultText})`;
      },
    })
    .addHelpText(
      'after',
      '\nEvery flag can also be set through its environment variable; the flag wins. An empty\n' +
        'environment variable counts as unset. An invalid value stops the process with exit code 2.\n',
    );
  for (const key of KEYS) {
    const spec = SETTINGS[key] as SettingSpec<unknown>;
    const isBoolean = spec.parser === boolean;
    // A boolean flag takes an optional value, so `--ha-enabled` alone means true.
    const option = new Option(`${spec.flag} ${isBoolean ? `[${spec.valueName}]` : `<${spec.valueName}>`}`, spec.description).argParser(
      (raw: string) => parseValue(spec, raw),
    );
    options.set(key, option);
    specOf.set(option, spec);
    program.addOption(option);
  }
  return { program, optionOf: (key) => options.get(key)! };
}

/**
 * Rules between settings. The lease timing is checked even with HA off, so a bad ConfigMap is
 * refused when written, not on the day someone turns HA on.
 */
function crossCheck(s: Settings): void {
  const lease = SETTINGS.haLeaseDurationSeconds.env;
  const renew = SETTINGS.haRenewDeadlineSeconds.env;
  const retry = SETTINGS.haRetryPeriodSeconds.env;
  if (
    brokenLeaseRule({
      leaseDuration: s.haLeaseDurationSeconds,
      renewDeadline: s.haRenewDeadlineSeconds,
      retryPeriod: s.haRetryPeriodSeconds,
    })
  ) {
    throw new SettingsError(
      `invalid leader election timing: ${lease} (${s.haLeaseDurationSeconds}) must be greater than ${renew} ` +
        `(${s.haRenewDeadlineSeconds}), which must be greater than ${JITTER_FACTOR} x ${retry} ` +
        `(${JITTER_FACTOR} x ${s.haRetryPeriodSeconds} = ${round(JITTER_FACTOR * s.haRetryPeriodSeconds)}); ` +
        `otherwise a leader may not notice it lost the Lease before a standby takes over (defaults ${LEASE_DEFAULT_SECONDS.leaseDuration} > ${LEASE_DEFAULT_SECONDS.renewDeadline} > ${JITTER_FACTOR} x ${LEASE_DEFAULT_SECONDS.retryPeriod})`,
    );
  }
  if (s.metricsEnabled && s.metricsPort !== 0 && s.metricsPort === s.healthPort) {
    throw new SettingsError(
      `invalid ${SETTINGS.metricsPort.env} (${SETTINGS.metricsPort.flag}) and ${SETTINGS.healthPort.env} ` +
        `(${SETTINGS.healthPort.flag}): both are ${s.metricsPort}; the metrics and probe servers need different ports`,
    );
  }
  if (s.metricsInsecurePlainHttp && s.metricsCertDir !== '') {
    throw new SettingsError(
      `invalid ${SETTINGS.metricsCertDir.env} (${SETTINGS.metricsCertDir.flag}) with ${SETTINGS.metricsInsecurePlainHttp.env}=true ` +
        `(${SETTINGS.metricsInsecurePlainHttp.flag}): plain HTTP uses no certificate; set one or the other`,
    );
  }
}

function round(n: number): number {
  return Math.round(n * 1000) / 1000;
}

/**
 * The pod's namespace from the service account mount. Read here rather than through kube/config
 * so that parsing settings (and --help) does not load @kubernetes/client-node.
 */
function readInClusterNamespace(): string | undefined {
  const path = '/var/run/secrets/kubernetes.io/serviceaccount/namespace';
  try {
    return existsSync(path) ? readFileSync(path, 'utf8').trim() || undefined : undefined;
  } catch {
    return undefined;
  }
}
