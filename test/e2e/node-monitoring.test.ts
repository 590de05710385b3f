/**
 * The on-call kit against a real run: the operator installed as a user installs it (HA, two
 * replicas, metrics certificate from metrics.certSecret) on a private cluster with a node, and
 * Debian's Prometheus, in the node's network namespace, scraping it with the plain scrape config
 * of docs/monitoring.md (endpointslice discovery through the API server, the scraper's token, the
 * certificate verified) and evaluating the test's copy of the alert rules (alertRuleGroups(r), each
 * `for:` shortened to FOR_SECONDS). The harness (scripts/lab/pictures/live-run.ts) is the one the
 * pictures of docs/monitoring.md are drawn with.
 *
 * 1. Healthy: EchoperatorNoLeader evaluates, and is neither pending nor firing, for FOR_SECONDS and
 *    two evaluations more after the leader's series is stored.
 * 2. No leader: the Deployment scaled to 0 makes EchoperatorNoLeader fire; scaled back to 2, it
 *    resolves.
 * 3. Workload: ECHOS Echos (their pods kept off the node) and ON_NODE more whose Jobs the node
 *    runs, a restart (a standby's pod deleted), a failover (the Lease holder's pod deleted); then
 *    every dashboard panel's query (dashboardPanelQueries()) runs against Prometheus over the run
 *    and must return a series with a number (NaN draws nothing). Every empty panel is named in
 *    the failure.
 *
 * Prometheus is stopped and its data removed, then the cluster; also when an assertion fails.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test, type TestContext } from 'node:test';
import { dashboardPanelQueries } from '../../infra/monitoring/dashboard.js';
import { metricsSelector } from '../../infra/monitoring/selector.js';
import { ensureDebianPackages } from '../../scripts/ship/apt.js';
import { startMonitoredRun, type MonitoredRun } from '../../scripts/lab/pictures/live-run.js';
import { substitutePanelVariables } from '../../scripts/lab/pictures/panels.js';
import { rulesWithShortFor } from '../../scripts/ship/gen/monitoring-rules.js';
import { loadOperatorImage } from '../../scripts/testbed/operator-image.js';
import { startPrivateControlPlane } from '../support/faults.js';
import { eventually } from '../support/eventually.js';

const NO_LEADER = 'EchoperatorNoLeader';
/** Every alert's `for:` in the test's copy of the rules: seconds, where production waits minutes. */
const FOR_SECONDS = 3;
/** Echos whose Jobs stay Pending (the reconciles, queues and API calls are the operator's all the same). */
const ECHOS = 300;
/** Echos whose Jobs the node runs: each a pod on a two-core node, so a few. */
const ON_NODE = 6;

const seconds = (from: number, to = Date.now() / 1000): string => `${(to - from).toFixed(1)} s`;

test(
  'a real Prometheus with the plain scrape config: "no leader" fires and resolves; after a workload every dashboard panel has data',
  { timeout: 600_000 },
  async (t) => {
    ensureDebianPackages({ prometheus: 'a real Prometheus evaluating the alerts (node-monitoring test)' }, (l) => t.diagnostic(l));
    const started = Date.now() / 1000;
    const cp = await startPrivateControlPlane({ node: true });
    t.after(() => cp.stop());
    await loadOperatorImage(cp.state);
    const dir = mkdtempSync(join(tmpdir(), 'echoperator-monitoring-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const run = await startMonitoredRun({
      state: cp.state,
      kubectl: cp.kubectl,
      dir,
      rules: (r) => rulesWithShortFor(r, FOR_SECONDS),
      log: (l) => t.diagnostic(l),
    });
    // Before the cluster (and its network namespace) goes, also when an assertion fails.
    t.after(() => run.stop());
    t.diagnostic(`phase install (cluster, image, operator, Prometheus): ${seconds(started)}`);
    try {
      await healthy(t, run);
      await noLeaderFiresAndResolves(t, run);
      await everyPanelHasData(t, run);
    } finally {
      await run.stop();
    }
    assert.equal(spawnSync('pgrep', ['-f', '--', `--storage.tsdb.path=${run.prometheus.dataDir}`]).status, 1, 'Prometheus stopped');
  },
);

function noLeaderState(run: MonitoredRun): { state: string; alert: string | undefined } {
  const rule = run.prometheus.rules().find((r) => r.name === NO_LEADER);
  assert.ok(rule, `${NO_LEADER} is among the rules Prometheus loaded`);
  assert.equal(rule.health, 'ok', `${NO_LEADER} evaluates: ${rule.lastError ?? ''}`);
  const alert = run.prometheus.alerts().find((a) => a.labels.alertname === NO_LEADER);
  return { state: rule.state ?? 'inactive', alert: alert?.state };
}

async function healthy(t: TestContext, run: MonitoredRun): Promise<void> {
  const from = Date.now() / 1000;
  const leaderSeen = await eventually(
    'the leader series stored',
    () => {
      const leaders = run.prometheus.query(`sum(leader_election_master_status{${metricsSelector(run.r)}})`);
      return leaders[0]?.value[1] === '1' ? leaders[0].value[0] : undefined;
    },
    60_000,
    1_000,
  );
  // Long enough for a wrong rule to go pending, and then firing: `for:` and two evaluations more.
  await eventually(
    `${NO_LEADER} evaluated for ${FOR_SECONDS + 2} s with a leader`,
    () => {
      const rule = run.prometheus.rules().find((r) => r.name === NO_LEADER);
      return rule && Date.parse(rule.lastEvaluation) / 1000 >= leaderSeen + FOR_SECONDS + 2;
    },
    60_000,
    500,
  );
  const { state, alert } = noLeaderState(run);
  assert.equal(state, 'inactive', `${NO_LEADER} with one leader among 2 replicas`);
  assert.equal(alert, undefined, `no ${NO_LEADER} alert with a leader`);
  t.diagnostic(`phase healthy: ${NO_LEADER} inactive with leader ${run.leader()} (${seconds(from)})`);
}

async function noLeaderFiresAndResolves(t: TestContext, run: MonitoredRun): Promise<void> {
  const stoppedAt = Date.now() / 1000;
  await run.scale(0);
  await eventually(
    `${NO_LEADER} firing with the Deployment at 0 replicas`,
    () => {
      const { state, alert } = noLeaderState(run);
      if (state === 'firing' && alert === 'firing') return true;
      throw new Error(`rule ${state}, alert ${alert ?? 'absent'}`);
    },
    120_000,
    500,
  );
  const firedAt = Date.now() / 1000;
  t.diagnostic(`phase no leader: ${NO_LEADER} firing ${seconds(stoppedAt, firedAt)} after scaling to 0`);
  await run.scale(run.r.ha.replicas);
  const restartedAt = Date.now() / 1000;
  await eventually(
    `${NO_LEADER} resolved with 2 replicas back`,
    () => {
      const { state, alert } = noLeaderState(run);
      if (state === 'inactive' && alert === undefined) return true;
      throw new Error(`rule ${state}, alert ${alert ?? 'absent'}`);
    },
    120_000,
    500,
  );
  t.diagnostic(
    `phase no leader: back to 2 replicas after ${seconds(firedAt, restartedAt)}, ${NO_LEADER} resolved ${seconds(restartedAt)} later (leader ${run.leader()})`,
  );
}

async function everyPanelHasData(t: TestContext, run: MonitoredRun): Promise<void> {
  const from = Date.now() / 1000;
  await run.echos(ECHOS, ON_NODE);
  t.diagnostic(`phase workload: ${ECHOS + ON_NODE} Echos with their Jobs in ${seconds(from)}`);
  const leader = run.leader();
  const standby = run.readyPods().find((p) => p !== leader);
  assert.ok(standby, 'a standby to restart');
  await run.deletePod(standby);
  const failover = Date.now() / 1000;
  await run.deletePod(run.leader());
  t.diagnostic(`phase restart + failover: ${seconds(failover)} for the failover (new leader ${run.leader()})`);

  const ran = `${Math.ceil(Date.now() / 1000 - run.marks[0]!.at)}s`;
  const variables = { namespace: run.r.namespace, job: `${run.r.name}-metrics`, rateInterval: ran, interval: ran, range: ran };
  const queries = dashboardPanelQueries();
  assert.ok(queries.length > 0, 'the dashboard has panels');
  const empty: string[] = [];
  for (const { panel, expr } of queries) {
    const promql = substitutePanelVariables(expr, variables);
    const result = run.prometheus.query(promql);
    // A series whose value is NaN (a quantile of no observation) draws nothing either.
    const numbers = result.filter((s) => !Number.isNaN(Number(s.value[1])));
    const shown = numbers[0] ?? result[0];
    t.diagnostic(
      `panel ${JSON.stringify(panel)}: ${result.length} series (${numbers.length} numbers), e.g. ${JSON.stringify(shown?.metric ?? {})}=${shown?.value[1] ?? '-'}`,
    );
    if (numbers.length === 0) empty.push(`${panel}: ${result.length ? 'only NaN' : 'no series'}: ${promql}`);
  }
  assert.deepEqual(empty, [], `dashboard panels without data after the workload (over the last ${ran}):\n${empty.join('\n')}`);
  t.diagnostic(`phase panels: ${queries.length} queries over the last ${ran}, each with data`);
}
