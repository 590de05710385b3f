/**
 * The operator and its install agree on every format (src/config/validation.ts): each input below
 * goes to the operator's settings parser (environment variable) and to the install's construct
 * (as a prop, and as a values.yaml key through parseValues), and all three accept it or all three
 * refuse it, as the API server and the kubelet would. (An empty value means "the default" on
 * every side, so it is not among them.)
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stringify } from 'yaml';
import { resolveEchoperatorProps, type EchoperatorProps } from '../../infra/props.js';
import { parseValues } from '../../infra/values.js';
import { parseSettings } from '../../src/config/index.js';
import { isLabelKey, isLabelValue } from '../../src/config/validation.js';

const SHA256 = 'a'.repeat(64);
const SHA512 = 'b'.repeat(128);

interface Field {
  /** The operator's environment variable. */
  env: string;
  /** The construct's props carrying the same value. */
  props: (v: string) => EchoperatorProps;
  /** The values.yaml keys carrying it, where their names or shapes differ from the props'. */
  values?: (v: string) => Record<string, unknown>;
  accepted: string[];
  refused: string[];
}

const FIELDS: Record<string, Field> = {
  'image reference (JOB_IMAGE; image, jobImage)': {
    env: 'JOB_IMAGE',
    props: (v) => ({ image: v, jobImage: v }),
    // image is a map in values.yaml (repository, tag, digest): values-go-chart.test.ts checks its parts.
    values: (v) => ({ jobImage: v }),
    accepted: [
      'busybox',
      'busybox:1.37',
      'docker.io/library/busybox:1.37',
      'localhost:5000/busybox:1',
      '[::1]:5000/busybox:1',
      '[2001:db8::1]/tools/busybox',
      'Registry.Example.com/tools/busybox:1', // the domain may have capitals, the path not
      `busybox@sha256:${SHA256}`,
      `busybox@sha512:${SHA512}`,
      `ghcr.io/x/busybox:1.37@sha256:${SHA256}`,
      'a/b__c/d-e/f.g:Tag_1.0-x',
    ],
    refused: [
      'Busybox:1',
      'ghcr.io/X/busybox',
      'busybox:',
      ':1',
      'busybox:1 2',
      `busybox@sha256:${SHA256.toUpperCase()}`,
      'busybox@sha256:abc',
      `busybox@sha256:${SHA512}`,
      `busybox@md5:${'c'.repeat(32)}`,
      `busybox:${'t'.repeat(129)}`,
      `${'a'.repeat(256)}:1`,
      '[::1/busybox',
      'https://ghcr.io/x/busybox',
    ],
  },
  'namespace name (NAMESPACE, namespace)': {
    env: 'NAMESPACE',
    props: (v) => ({ namespace: v }),
    accepted: ['default', 'team-a', 'a', 'x'.repeat(63), '1abc'],
    refused: ['Team-A', 'team_a', '-a', 'a-', 'a.b', 'x'.repeat(64)],
  },
  'watched namespace (WATCH_NAMESPACES, watchNamespaces)': {
    env: 'WATCH_NAMESPACES',
    props: (v) => ({ watchNamespaces: [v] }),
    accepted: ['team-a', 'x'.repeat(63)],
    refused: ['Team_B', 'a.b', 'x'.repeat(64)],
  },
  'object name, a DNS subdomain (HA_LEASE_LOCK_NAME, ha.leaseName)': {
    env: 'HA_LEASE_LOCK_NAME',
    props: (v) => ({ ha: { leaseName: v } }),
    values: (v) => ({ ha: { leaderElection: { leaseName: v } } }),
    accepted: ['echoperator', 'a.b-c.d', `${'x'.repeat(63)}.${'y'.repeat(63)}.${'z'.repeat(63)}.${'w'.repeat(61)}`],
    refused: ['My_Lock', 'a..b', '.a', 'a.', `${'x'.repeat(63)}.${'y'.repeat(63)}.${'z'.repeat(63)}.${'w'.repeat(62)}`],
  },
  'URL path (METRICS_PATH, metrics.path)': {
    env: 'METRICS_PATH',
    props: (v) => ({ metrics: { path: v } }),
    accepted: ['/metrics', '/', '/a/b-c_d.e~f', '/%20'],
    refused: ['metrics', '/metrics?x=1', '/a#b', '/a b', '/*', '*', '/metrics*', '/a/*/b'],
  },
  // 0 differs on purpose: METRICS_PORT=0 picks a free port, which an install cannot use.
  'port (METRICS_PORT, metrics.port)': {
    env: 'METRICS_PORT',
    props: (v) => ({ metrics: { port: Number(v) } }),
    accepted: ['1', '2112', '65535'],
    refused: ['65536', '-1', '1.5', '70000'],
  },
};

/** Whether the operator accepts the value, and whether the construct does, from props and from values.yaml. */
function verdicts(field: Field, value: string): { settings: boolean; props: boolean; values: boolean } {
  const accepts = (f: () => unknown): boolean => {
    try {
      f();
      return true;
    } catch {
      return false;
    }
  };
  return {
    settings: accepts(() => parseSettings([], { [field.env]: value }, { inClusterNamespace: () => undefined, hostname: () => 'pod' })),
    props: accepts(() => resolveEchoperatorProps(field.props(value))),
    values: accepts(() => resolveEchoperatorProps(parseValues(stringify((field.values ?? field.props)(value))))),
  };
}

describe('the settings parser and the construct accept and refuse the same values', () => {
  for (const [name, field] of Object.entries(FIELDS)) {
    it(name, () => {
      const disagreements: string[] = [];
      for (const [values, expected] of [
        [field.accepted, true],
        [field.refused, false],
      ] as const) {
        for (const value of values) {
          const got = verdicts(field, value);
          const wrong = Object.entries(got).filter(([, ok]) => ok !== expected);
          if (wrong.length)
            disagreements.push(
              `${JSON.stringify(value)}: ${wrong.map(([side, ok]) => `${side} ${ok ? 'accepts' : 'refuses'}`).join(', ')}`,
            );
        }
      }
      assert.deepEqual(disagreements, []);
    });
  }
});

it('label keys and values: as the API server checks them', () => {
  for (const k of ['app', 'app.kubernetes.io/name', 'example.com/A_b.c-9', `${'x'.repeat(63)}`]) assert.ok(isLabelKey(k), k);
  for (const k of ['', 'a/b/c', '/a', 'Example.com/a', 'a/', `${'x'.repeat(64)}`, `${'p'.repeat(254)}/a`, 'bad key!']) {
    assert.ok(!isLabelKey(k), k);
  }
  for (const v of ['', 'a', 'A-b_c.d', 'x'.repeat(63)]) assert.ok(isLabelValue(v), v);
  for (const v of ['-a', 'a-', 'a b', 'x'.repeat(64)]) assert.ok(!isLabelValue(v), v);
});
