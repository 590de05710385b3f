/**
 * The shipped artifacts on the real control plane: the bundle on each supported Node line
 * (NODE_LINES: 22, 24, 26), the bundle on Deno 2 (with the narrow permissions the README documents)
 * and the single executable each print byte-identical --help, --version and errors with the same
 * exit codes as the operator on this machine's Node (the runtime every other e2e test uses), and
 * each runs the Echo flow. The Lease handover, two operators per runtime, runs where the runtime
 * differs most: the newest Node line, Deno and the single executable; the Node lines share the code
 * path it exercises (timers, the HTTP client, SIGTERM). The artifacts are built when missing or stale
 * (scripts/ship/runtimes.ts); the single executable is cached by the hash of its inputs.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { packageVersion } from '../../scripts/ship/build.js';
import { denoBinary, denoPermissions, ensureBundle, ensureSea, NODE_LINES, nodeBinary, nodeMajor } from '../../scripts/ship/runtimes.js';
import { applyEcho, eventually, jobsOf, kubeconfig, kubectl, onlyJobOf, testNamespace } from '../support/kube.js';
import { getEcho } from '../support/runs.js';
import { scratchDir } from '../support/scratch.js';
import { haReplicaEnv, installCrds, operatorCommand, startOperator, waitReady, type OperatorCommand } from '../support/operator.js';

type Ports = { healthPort: number; metricsPort: number };
interface Runtime {
  name: string;
  slug: string;
  command?: (ports?: Ports, kubeconfigPath?: string) => string[];
  skip?: string;
  /** Whether the Lease handover runs on it too (see the file's comment). */
  handover: boolean;
}

const bundle = await ensureBundle();
const sea = await ensureSea();
const deno = denoBinary();
// A cache of Deno's own for this file: Deno 2.9.5 reused the compiled code of an earlier bundle
// of the same byte length at the same path (ReferenceError in code the new bundle does not have).
process.env.DENO_DIR = scratchDir('deno-dir');

/** host:port of the API server, for Deno's --allow-net. */
function apiServerHost(): string {
  const server = /^\s*server:\s*(\S+)/m.exec(readFileSync(kubeconfig(), 'utf8'))?.[1];
  if (!server) throw new Error(`no server in ${kubeconfig()}`);
  return new URL(server).host;
}

function nodeRuntime(version: string): Runtime {
  const node = nodeBinary(version);
  const major = nodeMajor(version);
  const handover = version === NODE_LINES.at(-1);
  const named = { name: `bundle on Node ${major}`, slug: `node${major}`, handover };
  return node.path ? { ...named, command: () => [node.path!, bundle] } : { ...named, skip: node.reason };
}

const RUNTIMES: Runtime[] = [
  ...NODE_LINES.map(nodeRuntime),
  {
    name: 'bundle on Deno',
    slug: 'deno',
    // --allow-read follows KUBECONFIG, as the README says to run it.
    command: (ports, kubeconfigPath = kubeconfig()) => {
      const listen = ports ? [`[::]:${ports.healthPort}`, `[::]:${ports.metricsPort}`] : [];
      return [deno, 'run', ...denoPermissions({ read: [kubeconfigPath], net: [apiServerHost(), ...listen] }), bundle];
    },
    handover: true,
  },
  { name: 'single executable', slug: 'sea', command: () => [sea], handover: true },
];

function operator(rt: Runtime): OperatorCommand {
  return (ports) => rt.command!(ports);
}

function run(command: string[], args: string[], env: Record<string, string>): { status: number | null; stdout: string; stderr: string } {
  const [cmd, ...base] = command;
  const r = spawnSync(cmd!, [...base, ...args], { encoding: 'utf8', timeout: 60_000, env: { ...process.env, ...env } });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('every runtime prints the same --help, --version and errors, with the same exit codes, as the source', () => {
  const missing = '/nonexistent/echoperator/kubeconfig';
  const cases: { what: string; args: string[]; env: Record<string, string> }[] = [
    { what: '--help', args: ['--help'], env: {} },
    { what: '--version', args: ['--version'], env: {} },
    { what: 'KUBECONFIG at a missing file', args: [], env: { KUBECONFIG: missing } },
    { what: 'an invalid setting', args: [], env: { NUM_WORKERS: '0' } },
    { what: 'an unknown flag', args: ['--no-such-flag'], env: {} },
  ];
  const reference = operatorCommand();
  for (const c of cases) {
    const expected = run(reference, c.args, c.env);
    for (const rt of RUNTIMES.filter((r) => r.command)) {
      assert.deepEqual(run(rt.command!(undefined, c.env.KUBECONFIG), c.args, c.env), expected, `${rt.name}, ${c.what}`);
    }
    if (c.what === '--version') assert.deepEqual(expected, { status: 0, stdout: `${packageVersion()}\n`, stderr: '' });
    if (c.what === '--help') assert.match(expected.stdout, /^Usage: echoperator \[options\]/);
    if (c.what.startsWith('KUBECONFIG')) {
      assert.equal(expected.status, 2);
      assert.equal(
        expected.stderr,
        `error: KUBECONFIG points at ${missing}, which does not exist; set KUBECONFIG (or --kubeconfig) to a kubeconfig file, or leave it empty to run in-cluster\n`,
      );
    }
    if (c.what === 'an invalid setting') assert.equal(expected.status, 2);
  }
});

test('Deno without read access to the kubeconfig fails with a clear message and exit code 2', () => {
  const r = run([deno, 'run', ...denoPermissions({ read: [] }), bundle], [], { KUBECONFIG: kubeconfig() });
  assert.equal(r.status, 2, r.stderr);
  assert.equal(r.stdout, '');
  assert.match(r.stderr, /^error: cannot check \S+: Requires read access to "[^"]+", run again with the --allow-read flag\n$/);
});

function leaseHolder(ns: string): string | undefined {
  const r = kubectl(['get', 'lease', 'echoperator', '-o', 'jsonpath={.spec.holderIdentity}'], { namespace: ns });
  return r.code === 0 ? r.stdout : undefined;
}

for (const rt of RUNTIMES) {
  const skip = rt.skip ? { skip: rt.skip } : {};

  test(`${rt.name}: an Echo gets its Job and its status`, skip, async (t) => {
    const ns = testNamespace(t, `dist-echo-${rt.slug}`);
    installCrds();
    const op = await startOperator(t, { WATCH_NAMESPACES: ns, NAMESPACE: ns }, [], operator(rt));
    await waitReady(op);
    applyEcho(ns, 'hello', 'Hola, 世界!');
    const job = await onlyJobOf(ns, 'hello');
    const echo = getEcho(ns, 'hello');
    assert.equal(job.metadata!.ownerReferences![0]!.uid, echo.metadata.uid);
    assert.deepEqual(job.spec!.template.spec!.containers[0]!.command, ['printf', '%s\\n', 'Hola, 世界!']);
    const status = await eventually('the Echo status', () => {
      const s = getEcho(ns, 'hello').status;
      return s?.jobName ? s : undefined;
    });
    assert.equal(status.jobName, job.metadata!.name);
    assert.equal(await op.stop('SIGTERM'), 0, op.output().slice(-2000));
  });

  if (!rt.handover) continue;
  test(`${rt.name}: the standby takes the Lease when the leader gets SIGTERM`, skip, async (t) => {
    const ns = testNamespace(t, `dist-ha-${rt.slug}`);
    installCrds();
    const env = (id: string) => haReplicaEnv(ns, id);
    const a = await startOperator(t, env('replica-a'), [], operator(rt));
    await eventually('replica-a leads', () => leaseHolder(ns) === 'replica-a');
    const b = await startOperator(t, env('replica-b'), [], operator(rt));
    await eventually('replica-b stands by', () => /leader observed/.test(b.output()) && b.proc.exitCode === null);
    assert.equal(leaseHolder(ns), 'replica-a');

    const stoppedAt = Date.now();
    assert.equal(await a.stop('SIGTERM'), 0, a.output().slice(-2000));
    await eventually('replica-b takes the Lease', () => leaseHolder(ns) === 'replica-b', 20_000, 100);
    t.diagnostic(`handover took ${Date.now() - stoppedAt} ms after SIGTERM`);

    applyEcho(ns, 'after-handover', 'new leader');
    await eventually('the new leader reconciles', () => jobsOf(ns, 'after-handover').length === 1);
    assert.equal(await b.stop('SIGTERM'), 0, b.output().slice(-2000));
  });
}
