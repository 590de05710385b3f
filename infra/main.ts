/**
 * The cdk8s app: synthesizes the install described by infra/values.yaml (ha.enabled, or
 * ECHOPERATOR_HA=true|false to override it) into dist/manifests/echoperator.k8s.yaml.
 *
 *   npm run synth                      # tsx infra/main.ts
 *   ECHOPERATOR_HA=true npm run synth  # the HA variant
 *   cdk8s synth --check-upgrade=false  # the same through the cdk8s CLI (reads cdk8s.yaml)
 *
 * The output folder is emptied first, as the cdk8s CLI does, so a file left by an earlier layout
 * never lingers: keep nothing else in dist/manifests/ (the operator bundle goes to dist/bundle/).
 */
import { rmSync } from 'node:fs';
import { App, YamlOutputType } from 'cdk8s';
import { CHART_NAME, EchoperatorChart, OUTDIR } from './chart.js';
import { loadValues } from './values.js';

function main(): void {
  const props = loadValues();
  const app = new App({
    outdir: OUTDIR,
    // One file for the whole install, objects in apply order (Namespace and CRDs first), so a
    // plain `kubectl apply -f` works in one pass and a review diff shows the install at once.
    yamlOutputType: YamlOutputType.FILE_PER_CHART,
    outputFileExtension: '.k8s.yaml',
    recordConstructMetadata: false,
  });
  // Props are validated here, before anything on disk changes.
  new EchoperatorChart(app, CHART_NAME, props);
  rmSync(OUTDIR, { recursive: true, force: true });
  app.synth();
  console.error(`wrote ${OUTDIR}/${CHART_NAME}.k8s.yaml (HA ${props.ha?.enabled ? 'on' : 'off'})`);
}

try {
  main();
} catch (err) {
  console.error(`synth failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
