/**
 * The chart the app synthesizes, and in-process synthesis for tests and tooling.
 */
import { ApiObject, App, Chart, Yaml } from 'cdk8s';
import type { Construct } from 'constructs';
import { installedCrds } from './crds.js';
import { Echoperator, resolveEchoperatorProps, type EchoperatorProps } from './echoperator.js';

/** The install chart's id, hence its output file: dist/manifests/echoperator.k8s.yaml. */
export const CHART_NAME = 'echoperator';
/** The CRDs chart's id: dist/manifests/echoperator-crds.k8s.yaml, which sorts (and so applies) first. */
export const CRDS_CHART_NAME = 'echoperator-crds';

/** Where `npm run synth` writes the manifests; the cdk8s CLI passes cdk8s.yaml's `output` as CDK8S_OUTDIR. */
export const OUTDIR = process.env.CDK8S_OUTDIR || 'dist/manifests';

export class EchoperatorChart extends Chart {
  public readonly echoperator: Echoperator;

  constructor(scope: Construct, id: string, props: EchoperatorProps = {}) {
    // No chart-level namespace or labels: the construct sets both per object (a chart namespace
    // would also be stamped onto cluster-scoped objects).
    super(scope, id, { disableResourceNameHashes: true });
    this.echoperator = new Echoperator(this, 'Echoperator', props);
  }
}

/**
 * The CRDs alone (infra/crds.ts: src/api's, the same objects as crds/ save Helm's keep
 * annotation), so they can be managed apart from the install: a GitOps tool syncs them with
 * pruning off, since deleting a CRD deletes every Echo and ScheduledEcho in the cluster.
 */
export class EchoperatorCrdsChart extends Chart {
  constructor(scope: Construct, id: string, keep: boolean) {
    super(scope, id, { disableResourceNameHashes: true });
    for (const crd of installedCrds(keep)) new ApiObject(this, `Crd-${crd.spec.names.kind}`, crd);
  }
}

/**
 * What the app synthesizes: two charts, hence two files in one folder, the CRDs (unless
 * crds.enabled is false) apart from the rest of the install. `kubectl apply -f` of the folder
 * applies both, the CRDs' file first; a GitOps repository keeps each in a folder of its own.
 */
export function addCharts(app: App, props: EchoperatorProps): void {
  const { crds } = resolveEchoperatorProps(props);
  if (crds.enabled) new EchoperatorCrdsChart(app, CRDS_CHART_NAME, crds.keep);
  new EchoperatorChart(app, CHART_NAME, { ...props, crds: { ...crds, enabled: false } });
}

/** The files the app writes for these props (name -> text), in memory. */
export function synthesizeFiles(props: EchoperatorProps = {}): Record<string, string> {
  const app = new App({ outdir: '/nonexistent', recordConstructMetadata: false });
  addCharts(app, props);
  app.synthYaml(); // validates the tree as synth() does
  return Object.fromEntries(
    app.charts.map((chart) => {
      const objects: unknown[] = chart.toJson();
      return [`${chart.node.id}.k8s.yaml`, Yaml.stringify(...objects)];
    }),
  );
}

/** A Kubernetes object as synthesized. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  /** The rest is whatever the kind defines (cdk8s's toJson() is untyped): readers name the kind's type. */
  [key: string]: unknown;
}

export interface Synthesized {
  /** The objects in apply order. */
  objects: Manifest[];
  /** The exact text of dist/manifests/echoperator.k8s.yaml for these props. */
  yaml: string;
  echoperator: Echoperator;
}

/** Synthesizes an install in memory, exactly as the app writes it, without touching the disk. */
export function synthesize(props: EchoperatorProps = {}): Synthesized {
  const app = new App({ outdir: '/nonexistent', recordConstructMetadata: false });
  const chart = new EchoperatorChart(app, CHART_NAME, props);
  // synthYaml() validates the tree like synth() does; the text is what synth() saves.
  const yaml = app.synthYaml();
  return { objects: chart.toJson() as Manifest[], yaml, echoperator: chart.echoperator };
}
