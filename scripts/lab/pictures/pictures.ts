/**
 * `npm run monitoring:pictures`: the dashboard's panels drawn from a real run, for
 * docs/monitoring.md. The run is the live test's (scripts/lab/pictures/live-run.ts): a private
 * cluster with a node, the operator with HA (2 replicas) and metrics.certSecret, Debian's
 * Prometheus scraping it every 2 s with the plain scrape config; then no leader for a while
 * (scaled to 0 and back), a few hundred Echos, a restart (a standby's pod deleted) and a failover
 * (the leader's pod deleted). Each timeseries panel's queries are read with query_range over the
 * run and each row of the dashboard becomes docs/monitoring/<row>.svg (scripts/lab/bench/chart.ts),
 * the run's moments lettered on every panel. The cluster and Prometheus are stopped at the end.
 *
 * Root and the node's binaries are needed, as for `npm run demo`; it takes a few minutes.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DASHBOARD_ROWS, type PanelSpec } from '../../../infra/monitoring/dashboard-panels.js';
import { metricsServiceName } from '../../../infra/monitoring/scrape-config.js';
import { lineChart, siTick, type LinePanel } from '../bench/chart.js';
import { startControlPlane, stopControlPlane } from '../../testbed/controlplane/cluster.js';
import { ensureDebianPackages } from '../../ship/apt.js';
import { eventually } from '../../testbed/eventually.js';
import { kubectlFor } from '../../testbed/kubectl.js';
import { loadOperatorImage } from '../../testbed/operator-image.js';
import { SCRAPE_SECONDS, startMonitoredRun, type MonitoredRun } from './live-run.js';
import { substitutePanelVariables } from './panels.js';
import { rulesWithShortFor } from '../../ship/gen/monitoring-rules.js';

export const PICTURES_DIR = 'docs/monitoring';
const ECHOS = 300;
const ON_NODE = 6;
/** The alerts' `for:` in this run (the live test's): "no leader" lasts until its alert fires. */
const FOR_SECONDS = 3;

const log = (line: string): void => console.error(`monitoring:pictures: ${line}`);

/** The y ticks in the panel's Grafana unit. */
function tickFor(unit: string): (y: number) => string {
  if (unit === 's') return (y) => `${siTick(y)}s`;
  if (unit === 'bytes') return (y) => `${siTick(y)}B`;
  if (unit === 'ops' || unit === 'reqps') return (y) => `${siTick(y)}/s`;
  // Counts and ratios: 0.2 reads better than 200m.
  return (y) => (Math.abs(y) < 1 ? String(Number(y.toPrecision(2))) : siTick(y));
}

/** Grafana's legendFormat: `{{label}}` replaced by the series' label. */
const legendOf = (format: string, metric: Record<string, string>): string =>
  format.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, l: string) => metric[l] ?? '');

/** Waits until Prometheus has scraped the operator `seconds` past `since` (a rate needs the samples). */
async function scrapedPast(run: MonitoredRun, since: number, seconds: number): Promise<void> {
  const job = metricsServiceName(run.r);
  await eventually(
    `scrapes ${seconds} s after the last step`,
    () => run.prometheus.query(`min(timestamp(up{job="${job}"}))`).some((s) => Number(s.value[1]) >= since + seconds),
    seconds * 1000 + 60_000,
    1_000,
  );
}

/** The whole scenario; returns the run's span (unix seconds). */
async function workload(run: MonitoredRun): Promise<{ start: number; end: number }> {
  const start = run.marks[0]!.at;
  await run.scale(0);
  await eventually(
    'EchoperatorNoLeader firing',
    () => run.prometheus.alerts().some((a) => a.labels.alertname === 'EchoperatorNoLeader' && a.state === 'firing'),
    120_000,
    1_000,
  );
  run.mark('EchoperatorNoLeader firing');
  await run.scale(run.r.ha.replicas);
  await run.echos(ECHOS, ON_NODE);
  const standby = run.readyPods().find((p) => p !== run.leader());
  if (!standby) throw new Error('no standby to restart');
  await run.deletePod(standby);
  await scrapedPast(run, Date.now() / 1000, 10);
  await run.deletePod(run.leader());
  const settled = Date.now() / 1000;
  await scrapedPast(run, settled, 20);
  return { start, end: Date.now() / 1000 };
}

function drawRow(run: MonitoredRun, panels: PanelSpec[], span: { start: number; end: number }): LinePanel[] {
  const rateInterval = `${4 * SCRAPE_SECONDS}s`;
  const variables = {
    namespace: run.r.namespace,
    job: metricsServiceName(run.r),
    rateInterval,
    interval: `${SCRAPE_SECONDS}s`,
    range: rateInterval,
  };
  return panels.map((p) => ({
    title: p.title,
    yTick: tickFor(p.unit),
    series: p.queries.flatMap((q) =>
      run.prometheus.queryRange(substitutePanelVariables(q.expr, variables), span.start, span.end, SCRAPE_SECONDS).map((s) => ({
        name: legendOf(q.legend, s.metric),
        points: s.values.map(([t, v]): [number, number] => [t - span.start, Number(v)]),
      })),
    ),
  }));
}

const slug = (title: string): string =>
  title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-|-$/g, '');

async function main(): Promise<void> {
  ensureDebianPackages({ prometheus: 'the Prometheus the pictures are drawn from' }, log);
  const dir = mkdtempSync(join(tmpdir(), 'echoperator-pictures-'));
  const state = await startControlPlane({ dir: join(dir, 'cluster'), detached: false, node: true, log });
  let run: MonitoredRun | undefined;
  try {
    await loadOperatorImage(state);
    run = await startMonitoredRun({
      state,
      kubectl: kubectlFor(state.kubeconfig),
      dir,
      rules: (r) => rulesWithShortFor(r, FOR_SECONDS),
      log,
    });
    const span = await workload(run);
    const marks = run.marks.map((m) => ({ x: m.at - span.start, label: `${m.what} (${Math.round(m.at - span.start)} s)` }));
    for (const row of DASHBOARD_ROWS) {
      const panels = row.panels.filter((p) => p.kind !== 'stat');
      if (!panels.length) continue;
      const file = join(PICTURES_DIR, `${slug(row.title)}.svg`);
      const drawn = drawRow(run, panels, span);
      writeFileSync(file, lineChart({ title: row.title, xLabel: 'seconds since the install', panels: drawn, marks }));
      log(`${file}: ${drawn.map((p) => `${p.title} (${p.series.length} series)`).join(', ')}`);
    }
    for (const m of marks) log(`t=${Math.round(m.x)} s ${m.label}`);
  } finally {
    await run?.stop();
    await stopControlPlane(state);
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
