/**
 * The chart the app synthesizes, and in-process synthesis for tests and tooling.
 */
import { App, Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { Echoperator, type EchoperatorProps } from './echoperator.js';

/** The chart's id, hence the output file: dist/manifests/echoperator.k8s.yaml. */
export const CHART_NAME = 'echoperator';

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

/** A Kubernetes object as synthesized. */
export interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the rest is whatever the kind defines, as untyped as cdk8s's toJson()
  [key: string]: any;
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
