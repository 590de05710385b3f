import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { SETTINGS, SettingsError, parseSettings, type ParseOptions, type Settings } from '../../src/config/index.js';
import { VERSION } from '../../src/version.js';
import { scratchDir } from '../support/scratch.js';

const machine: ParseOptions = {
  hostname: () => 'host-1',
  randomHex: (n) => 'ab'.repeat(n),
  inClusterNamespace: () => undefined,
};

function parse(argv: string[] = [], env: NodeJS.ProcessEnv = {}, options: ParseOptions = {}): Settings {
  return parseSettings(argv, env, { ...machine, ...options });
}

function parseError(argv: string[], env: NodeJS.ProcessEnv = {}): SettingsError {
  try {
    parse(argv, env);
  } catch (err) {
    assert.ok(err instanceof SettingsError, `expected a SettingsError, got ${String(err)}`);
    return err;
  }
  assert.fail(`expected ${JSON.stringify({ argv, env })} to be refused`);
}

const DEFAULTS: Settings = {
  kubeconfig: '',
  namespace: 'default',
  watchNamespaces: [],
  numWorkers: 4,
  haEnabled: false,
  haNodeId: 'host-1_abababab',
  haLeaseLockName: 'echoperator',
  haLeaseDurationSeconds: 15,
  haRenewDeadlineSeconds: 10,
  haRetryPeriodSeconds: 2,
  metricsEnabled: true,
  metricsPath: '/metrics',
  metricsPort: 2112,
  metricsCertDir: '',
  metricsInsecurePlainHttp: false,
  healthPort: 8081,
  logLevel: 'info',
  logFormat: 'auto',
  shutdownTimeoutSeconds: 30,
  jobImage: 'busybox:1.37',
  resyncPeriodSeconds: 0,
  workQueueOrder: 'fair',
  cacheSyncTimeoutSeconds: 120,
  apiUnreachableTimeoutSeconds: 120,
};

describe('settings: defaults', () => {
  it('gives every setting its documented default with no flag and no environment', () => {
    assert.deepEqual(parse(), DEFAULTS);
  });

  it('treats an empty or blank environment variable as unset', () => {
    const env = Object.fromEntries(Object.values(SETTINGS).map((s) => [s.env, '  ']));
    assert.deepEqual(parse([], env), DEFAULTS);
  });

  it('takes the namespace from NAMESPACE, else POD_NAMESPACE, else the in-cluster file, else default', () => {
    const inCluster: ParseOptions = { inClusterNamespace: () => 'from-file' };
    assert.equal(parse([], { NAMESPACE: 'ops', POD_NAMESPACE: 'pod-ns' }, inCluster).namespace, 'ops');
    assert.equal(parse([], { POD_NAMESPACE: 'pod-ns' }, inCluster).namespace, 'pod-ns');
    assert.equal(parse([], {}, inCluster).namespace, 'from-file');
    assert.equal(parse([], {}).namespace, 'default');
  });

  it('refuses a computed default that is invalid, naming the setting', () => {
    const err = parseError([], { POD_NAMESPACE: 'Not_A_Namespace' });
    assert.match(err.message, /^invalid NAMESPACE \(--namespace\) "Not_A_Namespace" \(computed default\): expected a namespace name/);
  });

  it('makes a node id unique per process: hostname plus 8 random hex digits', () => {
    const a = parseSettings([], {}, { inClusterNamespace: () => undefined, hostname: () => 'pod-7' }).haNodeId;
    const b = parseSettings([], {}, { inClusterNamespace: () => undefined, hostname: () => 'pod-7' }).haNodeId;
    assert.match(a, /^pod-7_[0-9a-f]{8}$/);
    assert.notEqual(a, b);
  });

  it('selects text logs for ENV=local when LOG_FORMAT is auto, but not over an explicit format', () => {
    assert.equal(parse([], { ENV: 'local' }).logFormat, 'text');
    assert.equal(parse([], { ENV: 'local', LOG_FORMAT: 'json' }).logFormat, 'json');
    assert.equal(parse([], { ENV: 'production' }).logFormat, 'auto');
  });
});

describe('settings: sources and precedence', () => {
  it('reads every setting from its environment variable', () => {
    const env = {
      KUBECONFIG: '/tmp/kc',
      NAMESPACE: 'ops',
      WATCH_NAMESPACES: 'team-a, team-b,,team-a',
      NUM_WORKERS: '8',
      HA_ENABLED: 'TRUE',
      HA_NODE_ID: 'node-a',
      HA_LEASE_LOCK_NAME: 'echo.lock',
      HA_LEASE_DURATION_SECONDS: '30',
      HA_RENEW_DEADLINE_SECONDS: '20',
      HA_RETRY_PERIOD_SECONDS: '0.5',
      METRICS_ENABLED: 'false',
      METRICS_PATH: '/m',
      METRICS_PORT: '9090',
      METRICS_CERT_DIR: '/etc/metrics-cert',
      HEALTH_PORT: '0',
      LOG_LEVEL: 'DEBUG',
      LOG_FORMAT: 'json',
      SHUTDOWN_TIMEOUT_SECONDS: '5',
      JOB_IMAGE: 'registry.example.com:5000/tools/busybox:1.36',
      RESYNC_PERIOD_SECONDS: '60',
      WORK_QUEUE_ORDER: 'FIFO',
      CACHE_SYNC_TIMEOUT_SECONDS: '30',
      API_UNREACHABLE_TIMEOUT_SECONDS: '0',
    };
    assert.deepEqual(parse([], env), {
      kubeconfig: '/tmp/kc',
      namespace: 'ops',
      watchNamespaces: ['team-a', 'team-b'],
      numWorkers: 8,
      haEnabled: true,
      haNodeId: 'node-a',
      haLeaseLockName: 'echo.lock',
      haLeaseDurationSeconds: 30,
      haRenewDeadlineSeconds: 20,
      haRetryPeriodSeconds: 0.5,
      metricsEnabled: false,
      metricsPath: '/m',
      metricsPort: 9090,
      metricsCertDir: '/etc/metrics-cert',
      metricsInsecurePlainHttp: false,
      healthPort: 0,
      logLevel: 'debug',
      logFormat: 'json',
      shutdownTimeoutSeconds: 5,
      jobImage: 'registry.example.com:5000/tools/busybox:1.36',
      resyncPeriodSeconds: 60,
      workQueueOrder: 'fifo',
      cacheSyncTimeoutSeconds: 30,
      apiUnreachableTimeoutSeconds: 0,
    } satisfies Settings);
  });

  it('lets a flag win over the environment variable, in both flag spellings', () => {
    assert.equal(parse(['--num-workers', '2'], { NUM_WORKERS: '8' }).numWorkers, 2);
    assert.equal(parse(['--num-workers=3'], { NUM_WORKERS: '8' }).numWorkers, 3);
    assert.equal(parse([], { NUM_WORKERS: '8' }).numWorkers, 8);
    assert.equal(parse(['--log-level', 'warn'], { LOG_LEVEL: 'debug' }).logLevel, 'warn');
  });

  it('ignores an invalid environment value that a flag overrides', () => {
    assert.equal(parse(['--num-workers', '2'], { NUM_WORKERS: 'lots' }).numWorkers, 2);
  });

  it('takes a bare boolean flag as true and an explicit value either way', () => {
    assert.equal(parse(['--ha-enabled']).haEnabled, true);
    assert.equal(parse(['--ha-enabled', 'false'], { HA_ENABLED: 'true' }).haEnabled, false);
    assert.equal(parse(['--metrics-enabled=false']).metricsEnabled, false);
    assert.equal(parse(['--metrics-enabled', 'true'], { METRICS_ENABLED: 'false' }).metricsEnabled, true);
  });

  it('lets an empty flag value mean in-cluster / all namespaces where empty is meaningful', () => {
    assert.equal(parse(['--kubeconfig', ''], { KUBECONFIG: '/tmp/kc' }).kubeconfig, '');
    assert.deepEqual(parse(['--watch-namespaces='], { WATCH_NAMESPACES: 'a' }).watchNamespaces, []);
  });

  it('accepts the image reference forms the kubelet accepts', () => {
    for (const image of [
      'busybox',
      'busybox:1.37',
      'library/busybox:latest',
      'ghcr.io/acme/tools/busybox:1.37-musl',
      'localhost:5000/busybox',
      `busybox@sha256:${'a'.repeat(64)}`,
      `registry.example.com/busybox:1.37@sha256:${'0'.repeat(64)}`,
    ]) {
      assert.equal(parse(['--job-image', image]).jobImage, image);
    }
  });
});

/** One invalid sample per setting that can be invalid, with what the message must promise. */
const INVALID: { [K in keyof Settings]?: [string, RegExp][] } = {
  namespace: [['Team_A', /a namespace name \(a DNS-1123 label/]],
  watchNamespaces: [['team-a,Team_B', /a comma-separated list of namespace names.*; "Team_B" is not a namespace name$/]],
  numWorkers: [
    ['abc', /an integer from 1 to 256$/],
    ['0', /an integer from 1 to 256$/],
    ['257', /an integer from 1 to 256$/],
    ['2.5', /an integer from 1 to 256$/],
  ],
  haEnabled: [['yes', /true or false$/]],
  haLeaseLockName: [['Echo_Lock', /a DNS-1123 subdomain/]],
  haLeaseDurationSeconds: [
    ['0', /a positive number of seconds/],
    ['86400', /86400 is more than 3600$/],
    ['15s', /a positive number of seconds/],
  ],
  haRenewDeadlineSeconds: [
    ['-1', /a positive number of seconds/],
    ['3601', /a positive number of seconds up to 3600, e\.g\. 15 or 0\.5; 3601 is more than 3600$/],
  ],
  haRetryPeriodSeconds: [
    ['1e3', /a positive number of seconds/],
    ['5000', /5000 is more than 3600$/],
  ],
  metricsEnabled: [['on', /true or false$/]],
  metricsPath: [
    ['metrics', /an absolute URL path such as \/metrics/],
    ['/metrics?x=1', /an absolute URL path/],
    ['/*', /no spaces, "\?", "#" or "\*", the RBAC wildcard/],
  ],
  metricsPort: [
    ['65536', /a port number from 0 to 65535 \(0 = any free port\)$/],
    ['http', /a port number from 0 to 65535/],
  ],
  metricsInsecurePlainHttp: [['yes', /true or false$/]],
  healthPort: [['-1', /a port number from 0 to 65535 \(0 = no probe server\)$/]],
  logLevel: [['trace', /one of debug, info, warn, error$/]],
  logFormat: [['yaml', /one of auto, json, text$/]],
  shutdownTimeoutSeconds: [
    ['0', /a positive number of seconds/],
    ['2147484', /up to 3600.*2147484 is more than 3600$/],
  ],
  jobImage: [
    ['Busybox:1.37', /a container image reference/],
    ['busybox:', /a container image reference/],
    ['busy box', /a container image reference/],
  ],
  resyncPeriodSeconds: [
    ['-5', /a number of seconds from 0 \(off\) to 86400$/],
    ['2147484', /a number of seconds from 0 \(off\) to 86400; 2147484 is more than 86400$/],
  ],
  workQueueOrder: [['lifo', /one of fair, fifo$/]],
  cacheSyncTimeoutSeconds: [
    ['0', /a positive number of seconds up to 3600/],
    ['forever', /a positive number of seconds/],
  ],
  apiUnreachableTimeoutSeconds: [
    ['-1', /a number of seconds from 0 \(no such check\) to 3600$/],
    ['3601', /3601 is more than 3600$/],
  ],
};

describe('settings: invalid values stop the process with exit code 2', () => {
  for (const [key, samples] of Object.entries(INVALID) as [keyof Settings, [string, RegExp][]][]) {
    const spec = SETTINGS[key];
    for (const [value, accepts] of samples) {
      it(`${spec.env}=${JSON.stringify(value)}, from the environment and from ${spec.flag}`, () => {
        const prefix = `invalid ${spec.env} (${spec.flag}) ${JSON.stringify(value)}: expected `;
        for (const err of [parseError([], { [spec.env]: value }), parseError([`${spec.flag}=${value}`])]) {
          assert.equal(err.exitCode, 2);
          assert.ok(err.message.startsWith(prefix), `message: ${err.message}`);
          assert.match(err.message, accepts);
        }
      });
    }
  }

  it('covers every setting that has an invalid value (KUBECONFIG, HA_NODE_ID and METRICS_CERT_DIR take any text)', () => {
    const uncovered = (Object.keys(SETTINGS) as (keyof Settings)[]).filter((k) => !INVALID[k]);
    assert.deepEqual(uncovered.sort(), ['haNodeId', 'kubeconfig', 'metricsCertDir']);
    assert.equal(parseError(['--ha-node-id=']).exitCode, 2);
  });

  it('refuses an unknown flag, with a suggestion, and an extra argument', () => {
    const unknown = parseError(['--num-worker', '3']);
    assert.equal(unknown.exitCode, 2);
    assert.match(unknown.message, /unknown option '--num-worker'[\s\S]*Did you mean --num-workers\?/);
    assert.equal(parseError(['run-now']).exitCode, 2);
  });
});

describe('settings: cross-checks', () => {
  const timing = (lease: number, renew: number, retry: number): NodeJS.ProcessEnv => ({
    HA_LEASE_DURATION_SECONDS: String(lease),
    HA_RENEW_DEADLINE_SECONDS: String(renew),
    HA_RETRY_PERIOD_SECONDS: String(retry),
  });

  it('accepts leaseDuration > renewDeadline > 1.2 x retryPeriod', () => {
    assert.equal(parse([], timing(15, 10, 2)).haLeaseDurationSeconds, 15);
    assert.equal(parse([], timing(3, 2.5, 2)).haRetryPeriodSeconds, 2);
  });

  for (const [lease, renew, retry] of [
    [10, 10, 2],
    [10, 15, 2],
    [15, 10, 10],
    [15, 2.4, 2],
  ] as const) {
    it(`refuses ${lease} / ${renew} / ${retry}, naming all three settings`, () => {
      const err = parseError([], timing(lease, renew, retry));
      assert.equal(err.exitCode, 2);
      assert.match(err.message, /^invalid leader election timing: /);
      for (const name of ['HA_LEASE_DURATION_SECONDS', 'HA_RENEW_DEADLINE_SECONDS', 'HA_RETRY_PERIOD_SECONDS'])
        assert.ok(err.message.includes(name), name);
      assert.ok(err.message.includes(`(${lease})`) && err.message.includes(`(${renew})`));
    });
  }

  it('checks the timing from flags as well', () => {
    assert.match(parseError(['--ha-renew-deadline-seconds', '20']).message, /must be greater than HA_RENEW_DEADLINE_SECONDS \(20\)/);
  });

  it('refuses the same port for metrics and probes, unless metrics are off', () => {
    const err = parseError(['--metrics-port', '8081']);
    assert.match(err.message, /METRICS_PORT \(--metrics-port\) and HEALTH_PORT \(--health-port\): both are 8081/);
    assert.equal(parse(['--metrics-port', '8081', '--metrics-enabled', 'false']).metricsPort, 8081);
  });

  it('serves metrics over HTTPS unless plain HTTP is asked for by name, and refuses a cert dir with plain HTTP', () => {
    assert.equal(parse().metricsInsecurePlainHttp, false);
    assert.equal(parse(['--metrics-insecure-plain-http']).metricsInsecurePlainHttp, true);
    assert.equal(parse([], { METRICS_INSECURE_PLAIN_HTTP: 'true' }).metricsInsecurePlainHttp, true);
    assert.equal(parse(['--metrics-cert-dir', '/certs']).metricsCertDir, '/certs');
    const err = parseError(['--metrics-cert-dir', '/certs'], { METRICS_INSECURE_PLAIN_HTTP: 'true' });
    assert.equal(err.exitCode, 2);
    assert.match(
      err.message,
      /^invalid METRICS_CERT_DIR \(--metrics-cert-dir\) with METRICS_INSECURE_PLAIN_HTTP=true \(--metrics-insecure-plain-http\): plain HTTP uses no certificate/,
    );
  });
});

describe('settings: --help and --version', () => {
  function output(argv: string[]): { text: string; err: SettingsError } {
    let text = '';
    try {
      parseSettings(argv, {}, { ...machine, writeOut: (s) => (text += s) });
    } catch (err) {
      assert.ok(err instanceof SettingsError);
      return { text, err };
    }
    assert.fail('expected an early exit');
  }

  it('--help lists every flag with its environment variable, default and accepted values, then exits 0', () => {
    const { text, err } = output(['--help']);
    assert.equal(err.exitCode, 0);
    assert.equal(err.message, '');
    for (const spec of Object.values(SETTINGS)) {
      const line = text.split('\n').find((l) => l.trimStart().startsWith(`${spec.flag} `));
      assert.ok(line, `help lists ${spec.flag}`);
      assert.ok(line.includes(`env: ${spec.env}`), `${spec.flag} names ${spec.env}`);
      assert.ok(line.includes(`default: ${spec.defaultText}`), `${spec.flag} shows its default`);
      assert.ok(line.includes(spec.parser.accepts), `${spec.flag} says what it accepts`);
    }
  });

  it('--version prints the version and exits 0', () => {
    const { text, err } = output(['--version']);
    assert.equal(err.exitCode, 0);
    assert.equal(text.trim(), VERSION);
    assert.match(VERSION, /^\d+\.\d+\.\d+/);
  });
});

describe('settings: parseSettingsOrExit in a real process', () => {
  const dir = scratchDir('settings');
  const script = join(dir, 'main.mjs');
  writeFileSync(
    script,
    `import { parseSettingsOrExit } from ${JSON.stringify(fileURLToPath(new URL('../../src/config/index.ts', import.meta.url)))};
const s = parseSettingsOrExit(); process.stdout.write(String(s.numWorkers));`,
  );
  const run = (argv: string[], env: NodeJS.ProcessEnv) =>
    spawnSync(process.execPath, ['--import', 'tsx', script, ...argv], {
      encoding: 'utf8',
      env: { PATH: process.env.PATH, ...env },
      timeout: 30_000,
    });

  it('exits 2 with the message on stderr for an invalid value', () => {
    const r = run([], { NUM_WORKERS: 'abc' });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /^error: invalid NUM_WORKERS \(--num-workers\) "abc": expected an integer from 1 to 256$/m);
    assert.equal(r.stdout, '');
  });

  it('runs on with valid settings', () => {
    const r = run(['--num-workers', '7'], {});
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, '7');
  });
});
