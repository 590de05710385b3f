/**
 * `npm run synth` takes Helm's command line (issue 33): `-f` files merged in order over
 * infra/values.yaml, `--set` / `--set-string` in Helm's syntax over them, `--help` prints usage and
 * writes nothing, and an unknown argument is refused instead of silently synthesizing defaults.
 * The parser's cases follow Helm's documentation of --set.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ConfigMap, V1Deployment } from '@kubernetes/client-node';
import { applySetArgument, mergeValues, SetValuesError } from '../../infra/set-values.js';
import { manifestsOf } from '../support/manifests.js';
import { runSynth, runSynthInSharedProcess } from '../support/synth.js';

describe("--set in Helm's syntax", () => {
  const set = (expression: string, base: Record<string, unknown> = {}): Record<string, unknown> => applySetArgument(base, expression);

  it('types values as Helm does: booleans, integers, null; the rest strings', () => {
    assert.deepEqual(set('a=true,b=false,c=42,d=-7,e=0123,f=1.5,g=text,h='), {
      a: true,
      b: false,
      c: 42,
      d: -7,
      e: '0123',
      f: '1.5',
      g: 'text',
      h: '',
    });
    assert.deepEqual(applySetArgument({}, 'a=true,c=42', true), { a: 'true', c: '42' });
  });

  it('nests on dots, escapes dots and commas with a backslash, keeps = inside a value', () => {
    assert.deepEqual(set('ha.enabled=true,ha.replicaCount=5'), { ha: { enabled: true, replicaCount: 5 } });
    assert.deepEqual(set('nodeSelector.kubernetes\\.io/os=linux'), { nodeSelector: { 'kubernetes.io/os': 'linux' } });
    assert.deepEqual(set('podAnnotations.note=a\\,b'), { podAnnotations: { note: 'a,b' } });
    assert.deepEqual(set('extra=x=y'), { extra: 'x=y' });
  });

  it('makes lists with braces and sets list elements by index, into what the files set', () => {
    assert.deepEqual(set('watchNamespaces={team-a,team-b}'), { watchNamespaces: ['team-a', 'team-b'] });
    assert.deepEqual(set('list={}'), { list: [] });
    assert.deepEqual(set('tolerations[1].key=dedicated'), { tolerations: [null, { key: 'dedicated' }] });
    const base = { tolerations: [{ key: 'a', effect: 'NoSchedule' }] };
    assert.deepEqual(set('tolerations[0].key=b', base), { tolerations: [{ key: 'b', effect: 'NoSchedule' }] });
    assert.deepEqual(base.tolerations[0]!.key, 'a', 'the input is not changed');
  });

  it('removes a key with null, and later assignments win', () => {
    assert.deepEqual(set('ha.enabled=null', { ha: { enabled: true, replicaCount: 3 } }), { ha: { replicaCount: 3 } });
    assert.deepEqual(set('numWorkers=2,numWorkers=3'), { numWorkers: 3 });
  });

  it('refuses an assignment without = or with an empty key, naming the argument', () => {
    assert.throws(
      () => set('ha.enabled'),
      (e: unknown) => e instanceof SetValuesError && /ha\.enabled.*key=value/.test(e.message),
    );
    assert.throws(() => set('ha..enabled=true'), SetValuesError);
    assert.throws(() => set('=true'), SetValuesError);
  });

  it('merges files as Helm does: maps key by key, lists replaced, null removes', () => {
    assert.deepEqual(
      mergeValues(
        { ha: { enabled: false, replicaCount: 3 }, list: [1, 2], keep: 1, drop: 2 },
        { ha: { enabled: true }, list: [3], drop: null },
      ),
      { ha: { enabled: true, replicaCount: 3 }, list: [3], keep: 1 },
    );
  });
});

/** The other cases share one process for their runs (cdk8s's import, once); --help above has its own. */
const synth = runSynthInSharedProcess;

describe('npm run synth, the command line', () => {
  it('--help prints the usage, exits 0 and writes nothing (a process of its own)', (t) => {
    const r = runSynth(t, ['--help']);
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^Usage: synth \[options\]/);
    assert.match(r.stdout, /--set <key=value>/);
    assert.equal(r.objects.length, 0);
  });

  it('refuses an unknown option or argument with exit 1, writing nothing', async (t) => {
    for (const args of [['--bogus'], ['values.yaml'], ['--set']]) {
      const r = await synth(t, args);
      assert.equal(r.status, 1, `${args.join(' ')}: ${r.stderr}`);
      assert.match(r.stderr, /^error: /, args.join(' '));
      assert.equal(r.objects.length, 0);
    }
  });

  it('--set ha.enabled=true synthesizes the HA install', async (t) => {
    const r = await synth(t, ['--set', 'ha.enabled=true']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(manifestsOf<V1Deployment>(r.objects, 'Deployment')[0]?.spec?.replicas, 3);
    assert.equal(manifestsOf(r.objects, 'PodDisruptionBudget').length, 1);
  });

  it("--release-name names the objects as Helm's scaffold does, and labels them with the instance", async (t) => {
    const named = async (release: string): Promise<{ name?: string; labels?: Record<string, string> }> => {
      const r = await synth(t, ['--release-name', release]);
      assert.equal(r.status, 0, r.stderr);
      const metadata = manifestsOf<V1Deployment>(r.objects, 'Deployment')[0]?.metadata;
      assert.equal(manifestsOf<V1ConfigMap>(r.objects, 'ConfigMap')[0]?.metadata?.name, `${metadata?.name}-config`);
      return { name: metadata?.name, labels: metadata?.labels };
    };
    const teamA = await named('team-a');
    assert.equal(teamA.name, 'team-a-echoperator');
    assert.equal(teamA.labels?.['app.kubernetes.io/instance'], 'team-a');
    assert.equal(teamA.labels?.['app.kubernetes.io/name'], 'echoperator');
    // A release name holding the chart's name is the objects' name as it is.
    assert.equal((await named('my-echoperator')).name, 'my-echoperator');
    const refused = await synth(t, ['--release-name', 'Team_A']);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /the release name must be at most 53 lower-case letters, digits, '-' and '\.'.*"Team_A"/);
    assert.equal(refused.objects.length, 0);
    assert.match((await synth(t, ['--help'])).stdout, /--release-name <name>/);
  });

  it('merges -f files in order, then --set, then --set-string; refuses the result as a whole', async (t) => {
    const files = { 'a.yaml': 'numWorkers: 8\nlogLevel: debug\n', 'b.yaml': 'logLevel: warn\n' };
    const settings = async (args: string[]): Promise<Record<string, string> | undefined> => {
      const r = await synth(t, args, files);
      assert.equal(r.status, 0, r.stderr);
      return manifestsOf<V1ConfigMap>(r.objects, 'ConfigMap')[0]?.data;
    };
    const merged = await settings(['-f', '{dir}/a.yaml', '-f', '{dir}/b.yaml']);
    assert.equal(merged?.NUM_WORKERS, '8');
    assert.equal(merged?.LOG_LEVEL, 'warn');
    const set = await settings([
      '-f',
      '{dir}/a.yaml',
      '--values',
      '{dir}/b.yaml',
      '--set',
      'numWorkers=2',
      '--set-string',
      'logLevel=error',
    ]);
    assert.equal(set?.NUM_WORKERS, '2');
    assert.equal(set?.LOG_LEVEL, 'error');
    const refused = await synth(t, ['-f', '{dir}/a.yaml', '--set', 'numWorkers=0'], files);
    assert.equal(refused.status, 1);
    assert.match(refused.stderr, /numWorkers: must be an integer of at least 1, got 0/);
    // A rule across values (the construct's) is worded with the values' keys, not the props'.
    const lease = await synth(t, ['--set', 'ha.leaderElection.leaseDurationSeconds=10,ha.leaderElection.renewDeadlineSeconds=10']);
    assert.equal(lease.status, 1);
    assert.match(
      lease.stderr,
      /--set: ha\.leaderElection\.leaseDurationSeconds \(10\) must be greater than ha\.leaderElection\.renewDeadlineSeconds \(10\)/,
    );
    const typo = await synth(t, ['--set', 'ha.enable=true']);
    assert.equal(typo.status, 1);
    assert.match(typo.stderr, /unknown key ha\.enable/);
  });
});
