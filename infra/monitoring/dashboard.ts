/**
 * The operator's Grafana dashboard, built with Grafana's typed builders
 * (@grafana/grafana-foundation-sdk) rather than written as JSON.
 *
 * Guarantees:
 * - Every query reads the operator's own series only, selected by DASHBOARD_SELECTOR, and names
 *   no template variable but `$namespace`, `$job` and Grafana's `$__rate_interval`,
 *   `$__interval` and `$__range`, so a test can substitute them and run each query as it is.
 * - Every panel has at least one query, a unit, a description and (stat panels apart) a legend.
 * - The output is a pure function of this file: uid `echoperator`, panel ids in order, no clock.
 *
 * Variables: `datasource` (any Prometheus), then `namespace` and `job` read from
 * echoperator_build_info, which every replica exports from its start.
 */
import {
  BigValueColorMode,
  BigValueGraphMode,
  GraphDrawStyle,
  LegendDisplayMode,
  LegendPlacement,
  LineInterpolation,
  ReduceDataOptionsBuilder,
  SortOrder,
  TooltipDisplayMode,
  VizLegendOptionsBuilder,
  VizTooltipOptionsBuilder,
} from '@grafana/grafana-foundation-sdk/common';
import type { Builder, Dataquery } from '@grafana/grafana-foundation-sdk/cog';
import {
  DashboardBuilder,
  DashboardCursorSync,
  DatasourceVariableBuilder,
  MappingType,
  QueryVariableBuilder,
  RowBuilder,
  ThresholdsConfigBuilder,
  ThresholdsMode,
  VariableRefresh,
  VariableSort,
  type Dashboard,
  type DataSourceRef,
  type Panel,
  type Threshold,
  type ValueMapping,
} from '@grafana/grafana-foundation-sdk/dashboard';
import { DataqueryBuilder } from '@grafana/grafana-foundation-sdk/prometheus';
import { PanelBuilder as StatPanelBuilder } from '@grafana/grafana-foundation-sdk/stat';
import { PanelBuilder as StateTimelinePanelBuilder } from '@grafana/grafana-foundation-sdk/statetimeline';
import { PanelBuilder as TimeseriesPanelBuilder } from '@grafana/grafana-foundation-sdk/timeseries';
import { DASHBOARD_ROWS, type PanelSpec } from './dashboard-panels.js';

export { DASHBOARD_SELECTOR } from './dashboard-panels.js';

/** The dashboard's uid: its URL (/d/echoperator) and the key a re-import replaces. */
export const DASHBOARD_UID = 'echoperator';

/** Every query runs on the data source the `datasource` variable picks. */
const DATASOURCE: DataSourceRef = { type: 'prometheus', uid: '${datasource}' };

/** The label variables: the first value, sorted, is chosen when the dashboard opens. */
function labelVariable(name: string, label: string, query: string): QueryVariableBuilder {
  return new QueryVariableBuilder(name)
    .label(label)
    .datasource(DATASOURCE)
    .query(query)
    .definition(query)
    .refresh(VariableRefresh.OnTimeRangeChanged)
    .sort(VariableSort.AlphabeticalAsc);
}

const legend = (): VizLegendOptionsBuilder =>
  new VizLegendOptionsBuilder()
    .showLegend(true)
    .displayMode(LegendDisplayMode.Table)
    .placement(LegendPlacement.Bottom)
    .calcs(['lastNotNull', 'max']);

const tooltip = (): VizTooltipOptionsBuilder => new VizTooltipOptionsBuilder().mode(TooltipDisplayMode.Multi).sort(SortOrder.Descending);

/** 0 is a standby, 1 the leader: leader_election_master_status as words. */
const LEADER_MAPPINGS: ValueMapping[] = [
  {
    type: MappingType.ValueToText,
    options: { '0': { text: 'standby', color: 'blue', index: 0 }, '1': { text: 'leader', color: 'green', index: 1 } },
  },
];

/** The spec's threshold colours (stat panels whose good value is known), else green throughout. */
function thresholds(spec: PanelSpec): ThresholdsConfigBuilder {
  const steps: Threshold[] = [{ value: null, color: spec.thresholds?.base ?? 'green' }];
  for (const [value, color] of spec.thresholds?.steps ?? []) steps.push({ value, color });
  return new ThresholdsConfigBuilder().mode(ThresholdsMode.Absolute).steps(steps);
}

function panelBuilder(spec: PanelSpec, id: number, targets: Builder<Dataquery>[]): Builder<Panel> {
  /** The settings every kind of panel shares. */
  const common = <B extends TimeseriesPanelBuilder | StatPanelBuilder | StateTimelinePanelBuilder>(b: B): B => {
    b.id(id).title(spec.title).description(spec.description).datasource(DATASOURCE).unit(spec.unit).targets(targets);
    b.span(spec.width)
      .height(spec.height ?? 8)
      .thresholds(thresholds(spec));
    return b;
  };
  switch (spec.kind ?? 'timeseries') {
    case 'stat': {
      const b = common(new StatPanelBuilder())
        .graphMode(BigValueGraphMode.Area)
        .colorMode(BigValueColorMode.Value)
        .reduceOptions(new ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false));
      return spec.noValue ? b.noValue(spec.noValue) : b;
    }
    case 'state':
      return common(new StateTimelinePanelBuilder())
        .mappings(LEADER_MAPPINGS)
        .legend(legend().displayMode(LegendDisplayMode.List))
        .tooltip(tooltip());
    case 'timeseries': {
      const b = common(new TimeseriesPanelBuilder()).legend(legend()).tooltip(tooltip()).fillOpacity(10).min(0);
      if (spec.axisLabel) b.axisLabel(spec.axisLabel);
      return spec.bars ? b.drawStyle(GraphDrawStyle.Bars).lineInterpolation(LineInterpolation.StepAfter).fillOpacity(80) : b;
    }
  }
}

/** The dashboard, as the JSON Grafana imports (the builders' marker methods dropped). */
export function echoperatorDashboard(): Dashboard {
  const builder = new DashboardBuilder('echoperator')
    .uid(DASHBOARD_UID)
    .description('echoperator: reconciles, work queues, leader election, API requests, Events and the process, per install.')
    .tags(['echoperator', 'kubernetes-operator'])
    .editable()
    .tooltip(DashboardCursorSync.Crosshair)
    .time({ from: 'now-1h', to: 'now' })
    .refresh('30s')
    .withVariable(new DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'))
    .withVariable(labelVariable('namespace', 'Namespace', 'label_values(echoperator_build_info, namespace)'))
    // Chained on the namespace, so two installs in two namespaces never mix.
    .withVariable(labelVariable('job', 'Job', 'label_values(echoperator_build_info{namespace="$namespace"}, job)'));
  let id = 0;
  for (const row of DASHBOARD_ROWS) {
    builder.withRow(new RowBuilder(row.title).id(++id));
    for (const spec of row.panels) {
      const targets = spec.queries.map((q, i) =>
        new DataqueryBuilder()
          .refId(String.fromCharCode(65 + i))
          .expr(q.expr)
          .legendFormat(q.legend)
          .range(),
      );
      builder.withPanel(panelBuilder(spec, ++id, targets));
    }
  }
  return JSON.parse(JSON.stringify(builder.build())) as Dashboard;
}

/** The dashboard as the file Grafana loads: indented, ending in a newline. */
export function dashboardJson(): string {
  return `${JSON.stringify(echoperatorDashboard(), null, 2)}\n`;
}

/** Every target's expression of every panel, read back from the dashboard's JSON. */
export function dashboardPanelQueries(): { panel: string; expr: string }[] {
  type JsonPanel = { type: string; title?: string; targets?: { expr?: string }[]; panels?: JsonPanel[] };
  const panels = (echoperatorDashboard().panels ?? []) as JsonPanel[];
  const all = panels.flatMap((p) => [p, ...(p.panels ?? [])]).filter((p) => p.type !== 'row');
  return all.flatMap((p) => (p.targets ?? []).map((t) => ({ panel: p.title ?? '', expr: t.expr ?? '' })));
}
