/**
 * The real switch from the Go echoperator to this one, measured (docs/migrating.md reports it):
 *
 *   npx tsx scripts/lab/migration/switch.ts     # about 10 minutes; needs root (the node) and Go
 *
 * On a private control plane with a node: the Go echoperator, built from its mirrored public
 * source (goechoperator.ts; npm test never fetches or builds it), is installed as its Helm chart
 * installs it for a release `echoperator` in namespace `echoperator` (its CRDs, its ServiceAccount
 * and ClusterRole; the process runs on the host with that ServiceAccount's token). Echos and
 * ScheduledEchos are made in team-a, team-b (one name in both) and in `echoperator` itself; once
 * its Jobs ran and its CronJobs fired, it is stopped (SIGTERM) and this operator is installed as
 * users do (`npm run synth`, `kubectl apply --server-side -f`, its image loaded into the node).
 * Then: which messages are printed again, what happens to the Go operator's Jobs and CronJobs,
 * what status and Events appear; last, every Echo and ScheduledEcho is deleted and what the Go
 * operator made is looked for again. Everything is read from the cluster: the node's container
 * logs, the audit log, lists. The figures go to stdout and dist/migration/switch.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { Echo } from '../../../src/api/echo.js';
import type { ScheduledEcho } from '../../../src/api/scheduledecho.js';
import { ROOT } from '../../ship/build.js';
import { readState } from '../../testbed/controlplane/cluster.js';
import { exitWithError } from '../../ship/errors.js';
import { buildImage, busyboxImageSpec, importImages } from '../../ship/image/images.js';
import { nodeLayout } from '../../testbed/controlplane/node/node.js';
import { acquireControlPlane } from '../../testbed/controlplane/session.js';
import { ensureNodeBinaries } from '../../testbed/controlplane/assets.js';
import { eventually } from '../../testbed/eventually.js';
import { kubectlFor, type Kubectl } from '../../testbed/kubectl.js';
import { loadOperatorImage } from '../../testbed/operator-image.js';
import {
  buildGoEchoperator,
  goSource,
  installGoChartRbac,
  installGoChartWorkload,
  startGoEchoperator,
  uninstallGoChart,
} from './goechoperator.js';
import { auditFromNow, cronJobs, events, jobs, PrintedLines, type AuditEntry, type Printed } from './observe.js';

/** The Go chart's release namespace, and this operator's default install namespace. */
const OPERATOR_NS = 'echoperator';
const TEAMS = ['team-a', 'team-b'];
/** The Job image the Go operator hard-codes (pkg/controller/resource.go). */
const GO_JOB_IMAGE = 'docker.io/library/busybox:1.33.1';

const ECHOS: { namespace: string; name: string; message: string }[] = [
  { namespace: 'team-a', name: 'hello', message: 'Hola, 世界! (team-a/hello)' },
  { namespace: 'team-a', name: 'bye', message: 'Adiós (team-a/bye)' },
  { namespace: 'team-b', name: 'hello', message: 'Hello (team-b/hello)' },
  { namespace: OPERATOR_NS, name: 'local', message: 'Echo in the operator namespace' },
];
const SCHEDULED: { namespace: string; name: string; message: string }[] = [
  { namespace: 'team-a', name: 'tick', message: 'tick (team-a/tick)' },
  { namespace: 'team-b', name: 'tick', message: 'tick (team-b/tick)' },
  { namespace: OPERATOR_NS, name: 'local-tick', message: 'tick (echoperator/local-tick)' },
];
const ALL_NS = [...TEAMS, OPERATOR_NS];
/** Arguments after `--` go to `npm run synth` (e.g. `-- --set confineServiceAccount=false`). */
const SYNTH_ARGS = process.argv.includes('--') ? process.argv.slice(process.argv.indexOf('--') + 1) : process.argv.slice(2);

const say = (line: string): void => console.log(`==> ${line}`);

/** Waits for a condition, but a condition that never holds is a finding, not a failure: false. */
async function settle(what: string, probe: () => boolean, timeoutMs: number): Promise<boolean> {
  try {
    await eventually(what, () => probe() || undefined, timeoutMs, 2000);
    return true;
  } catch {
    say(`not within ${timeoutMs / 1000} s: ${what}`);
    return false;
  }
}

/** message -> number of lines printed with exactly that text, in `printed`. */
function countMessages(printed: Printed[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const m of [...ECHOS, ...SCHEDULED].map((e) => e.message)) counts[m] = 0;
  for (const p of printed) for (const l of p.lines) if (l in counts) counts[l]! += 1;
  return counts;
}

function writes(audit: AuditEntry[], user: (u: string) => boolean): Record<string, number> {
  const out: Record<string, number> = {};
  for (const e of audit.filter((a) => user(a.user) && (a.code ?? 0) < 300)) {
    const key = `${e.verb} ${e.resource}${e.subresource ? `/${e.subresource}` : ''}`;
    out[key] = (out[key] ?? 0) + 1;
  }
  return out;
}

/** kubectl's -o json of several objects: a List, or one object. */
function parseList(text: string): { kind: string; spec?: unknown }[] {
  try {
    const v = JSON.parse(text) as { kind: string; items?: { kind: string; spec?: unknown }[] };
    return v.items ?? [v];
  } catch {
    return [];
  }
}

const applyList = (k: Kubectl, items: object[]): void => {
  k.ok(['apply', '-f', '-'], { input: JSON.stringify({ apiVersion: 'v1', kind: 'List', items }) });
};

async function main(): Promise<void> {
  const started = new Date();
  const src = goSource();
  const work = mkdtempSync(join(tmpdir(), 'echoperator-switch-'));
  const lease = await acquireControlPlane({ private: true, node: true });
  const state = readState(dirname(lease.kubeconfig))!;
  const k = kubectlFor(lease.kubeconfig, { timeoutMs: 300_000 });
  const printed = new PrintedLines(nodeLayout(state.dir).podLogsDir);
  const result: Record<string, unknown> = {
    date: started.toISOString(),
    goCommit: src.commit,
    kubernetes: state.kubernetesVersion,
    synthArgs: SYNTH_ARGS,
  };
  try {
    say(`control plane ${state.server}, Kubernetes ${state.kubernetesVersion}`);
    const goBinary = buildGoEchoperator(src, say);
    // The Go operator's Jobs pull busybox:1.33.1 (IfNotPresent): no registry here, so the node's
    // busybox is imported under that name too.
    const { mkimage } = await ensureNodeBinaries();
    importImages(state.node!.containerdSocket, [buildImage(mkimage, { ...busyboxImageSpec(), tag: GO_JOB_IMAGE })]);

    // 1. The Go operator, as its chart installs it (HA off), and the resources it serves.
    for (const ns of ALL_NS) k.ok(['create', 'namespace', ns]);
    const goKubeconfig = installGoChartRbac(k, OPERATOR_NS, work);
    installGoChartWorkload(k, OPERATOR_NS);
    const goUser = `system:serviceaccount:${OPERATOR_NS}:echoperator`;
    const auditAll = auditFromNow(state.dir);
    const go = startGoEchoperator(goBinary, goKubeconfig, OPERATOR_NS, join(work, 'go-echoperator.log'));
    say(`Go echoperator ${src.commit.slice(0, 12)} running as ${goUser} (NAMESPACE=${OPERATOR_NS})`);
    applyList(k, [
      ...ECHOS.map((e) => ({
        apiVersion: 'mmontes.io/v1alpha1',
        kind: 'Echo',
        metadata: { name: e.name, namespace: e.namespace },
        spec: { message: e.message },
      })),
      ...SCHEDULED.map((s) => ({
        apiVersion: 'mmontes.io/v1alpha1',
        kind: 'ScheduledEcho',
        metadata: { name: s.name, namespace: s.namespace },
        spec: { message: s.message, schedule: '*/1 * * * *' },
      })),
    ]);
    const goWrites = (): AuditEntry[] => auditAll().filter((a) => a.user === goUser);
    await settle(
      'the Go operator to create Jobs for the Echos and CronJobs for the ScheduledEchos',
      () => {
        const w = goWrites();
        const made = (r: string): number => w.filter((a) => a.verb === 'create' && a.resource === r && a.code === 201).length;
        return made('jobs') >= new Set(ECHOS.map((e) => e.name)).size && made('cronjobs') >= new Set(SCHEDULED.map((s) => s.name)).size;
      },
      60_000,
    );
    // Its Jobs finished (or were removed), and each of its CronJobs fired and that run finished.
    await settle(
      "the Go operator's Jobs to finish or be gone, and its CronJobs to fire once",
      () => {
        const js = jobs(k).filter((j) => j.namespace === OPERATOR_NS);
        const cjs = cronJobs(k).filter((c) => c.namespace === OPERATOR_NS);
        return js.every((j) => j.succeeded > 0) && cjs.every((c) => c.lastScheduleTime !== undefined) && js.length >= cjs.length;
      },
      150_000,
    );
    const goPrinted = printed.all();
    const before = {
      printed: countMessages(goPrinted),
      jobs: jobs(k),
      cronJobs: cronJobs(k),
      events: events(k).filter((e) => e.namespace !== 'kube-system'),
      goWrites: writes(auditAll(), (u) => u === goUser),
      // The garbage collector's and the cronjob controller's writes (kube-controller-manager, by User-Agent).
      controllerManagerWrites: auditAll().filter((a) => a.userAgent.startsWith('kube-controller-manager/') && a.resource !== 'events'),
    };
    result.goPhase = before;
    say(`Go phase: printed ${JSON.stringify(before.printed)}`);
    say(`Go phase: jobs ${before.jobs.map((j) => `${j.namespace}/${j.name}<-${j.controller}`).join(' ')}`);
    result.goStop = await go.stop();
    result.goLog = readFileSync(go.logFile, 'utf8').split('\n').slice(-15);
    say(`Go operator stopped: ${String(result.goStop)}`);

    // 2. This operator, installed as users do.
    const switchedAt = new Date();
    const auditSwitch = auditFromNow(state.dir);
    const seenBefore = new Set(printed.all().map((p) => `${p.namespace}/${p.pod}/${p.container}`));
    await loadOperatorImage(state);
    const out = join(work, 'manifests');
    const synth = spawnSync(process.execPath, ['--import', 'tsx', 'infra/main.ts', ...SYNTH_ARGS], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, CDK8S_OUTDIR: out },
    });
    if (synth.status !== 0) throw new Error(`npm run synth failed: ${synth.stderr}`);
    // With the Go chart's release still installed (its Deployment at 0): what would our apply do?
    const dryRun = k.run(['apply', '--server-side', '--dry-run=server', '-f', `${out}/`]);
    result.applyOverGoRelease = { code: dryRun.code, stderr: dryRun.stderr.trim().split('\n') };
    say(`kubectl apply --server-side --dry-run=server over the Go release: exit ${dryRun.code}\n${dryRun.stderr.trim()}`);
    if (dryRun.code !== 0) {
      const forced = k.run(['apply', '--server-side', '--force-conflicts', '--dry-run=server', '-f', `${out}/`, '-o', 'json']);
      const merged = forced.code === 0 ? parseList(forced.stdout) : [];
      const deployment = merged.find((o) => o.kind === 'Deployment');
      result.forcedOverGoRelease = { code: forced.code, stderr: forced.stderr.trim(), deploymentSpec: deployment?.spec };
    }
    // `helm uninstall` of the Go release first (CRDs and custom resources stay), then ours.
    result.goUninstall = uninstallGoChart(k, OPERATOR_NS).trim().split('\n');
    const plain = k.run(['apply', '--server-side', '-f', `${out}/`]);
    result.applyAfterGoUninstall = { code: plain.code, stderr: plain.stderr.trim().split('\n') };
    say(`kubectl apply --server-side after the Go release is gone: exit ${plain.code}${plain.code ? `\n${plain.stderr.trim()}` : ''}`);
    if (plain.code !== 0) {
      const forced = k.run(['apply', '--server-side', '--force-conflicts', '-f', `${out}/`]);
      result.applyWithForce = { code: forced.code, stderr: forced.stderr.trim() };
      say(`kubectl apply --server-side --force-conflicts: exit ${forced.code}`);
    }
    k.ok(['rollout', 'status', `deployment/echoperator`, '-n', OPERATOR_NS, '--timeout=180s']);
    say('this operator is Ready');
    const allEchos = (): Echo[] => k.json<{ items: Echo[] }>(['get', 'echos', '-A', '-o', 'json']).items;
    const allScheduled = (): ScheduledEcho[] => k.json<{ items: ScheduledEcho[] }>(['get', 'scheduledechos', '-A', '-o', 'json']).items;
    const hasCondition = (o: Echo | ScheduledEcho, type: string): boolean =>
      (o.status?.conditions ?? []).some((c) => c.type === type && c.observedGeneration === o.metadata.generation);
    await settle(
      'every Echo to have a finished run or a Ready condition, and every ScheduledEcho a Ready condition',
      () =>
        allEchos().every((e) => ['Succeeded', 'Failed'].includes(e.status?.phase ?? '') || hasCondition(e, 'Ready')) &&
        allScheduled().every((s) => hasCondition(s, 'Ready')),
      120_000,
    );
    // The next schedule time after the switch, and its runs finished: who prints on schedule now.
    await settle(
      'every CronJob to fire after the switch and its runs to finish',
      () => {
        const cjs = cronJobs(k);
        const fired = cjs.every((c) => c.lastScheduleTime !== undefined && new Date(c.lastScheduleTime) > switchedAt);
        return fired && jobs(k).every((j) => j.succeeded > 0);
      },
      150_000,
    );
    const newPrinted = printed.all().filter((p) => !seenBefore.has(`${p.namespace}/${p.pod}/${p.container}`));
    const switchAudit = auditSwitch();
    // Our ServiceAccount has the Go chart's name (echoperator in echoperator); the Go process is stopped by now.
    const ourUser = goUser;
    const after = {
      printed: countMessages(newPrinted),
      printedBy: newPrinted.map((p) => ({ pod: `${p.namespace}/${p.pod}`, container: p.container, lines: p.lines })),
      echoStatus: allEchos().map((e) => ({ echo: `${e.metadata.namespace}/${e.metadata.name}`, status: e.status })),
      scheduledStatus: allScheduled().map((s) => ({ scheduledEcho: `${s.metadata.namespace}/${s.metadata.name}`, status: s.status })),
      jobs: jobs(k),
      cronJobs: cronJobs(k),
      events: events(k).filter((e) => e.namespace !== 'kube-system'),
      ourWrites: writes(switchAudit, (u) => u === ourUser),
      ourWriteLog: switchAudit.filter((a) => a.user === ourUser && a.resource !== 'events' && a.resource !== 'leases'),
      otherWrites: switchAudit.filter(
        (a) => a.user !== ourUser && a.resource !== 'events' && a.resource !== 'leases' && !a.user.startsWith('system:node'),
      ),
      operatorLog: k
        .run(['logs', '-n', OPERATOR_NS, 'deployment/echoperator', '--tail=400'])
        .stdout.split('\n')
        .filter((l) => /"level":"(warn|error)"/.test(l))
        .slice(0, 30),
    };
    result.afterSwitch = after;
    say(`after the switch: printed again ${JSON.stringify(after.printed)}`);

    // 3. Garbage: delete every Echo and ScheduledEcho; what of the Go operator's is left?
    const auditDelete = auditFromNow(state.dir);
    for (const ns of ALL_NS) k.ok(['delete', 'echos,scheduledechos', '--all', '-n', ns, '--wait=true', '--timeout=120s']);
    await settle(
      'every Job and CronJob controlled by a deleted Echo or ScheduledEcho to be gone',
      () => jobs(k).every((j) => !j.controller) && cronJobs(k).every((c) => !c.controller),
      90_000,
    );
    result.afterDelete = {
      jobs: jobs(k),
      cronJobs: cronJobs(k),
      deletes: auditDelete().filter((a) => a.verb === 'delete' && (a.resource === 'jobs' || a.resource === 'cronjobs')),
      events: events(k).filter((e) => e.reason.startsWith('OwnerRef')),
    };
    say(`after deleting every Echo and ScheduledEcho: ${jobs(k).length} Jobs and ${cronJobs(k).length} CronJobs left`);
  } finally {
    printed.stop();
    const file = join(ROOT, 'dist', 'migration', `switch${SYNTH_ARGS.length ? '-custom' : ''}.json`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, `${JSON.stringify(result, null, 2)}\n`);
    say(`figures written to ${file}`);
    await lease.release();
    rmSync(work, { recursive: true, force: true });
    rmSync(src.dir, { recursive: true, force: true });
  }
}

main().catch(exitWithError);
