/**
 * The cdk8s app: synthesizes the install described by infra/values.yaml (ha.enabled, or
 * ECHOPERATOR_HA=true|false to override it) into dist/manifests/: echoperator-crds.k8s.yaml (the
 * CRDs) and echoperator.k8s.yaml (everything else), so a GitOps repository can sync the CRDs
 * apart, with pruning off; `kubectl apply --server-side -f dist/manifests/` applies both.
 *
 *   npm run synth                      # tsx infra/main.ts
 *   ECHOPERATOR_HA=true npm run synth  # the HA variant
 *   npm run synth -- -f my-values.yaml # another values file instead of infra/values.yaml (as helm -f)
 *   cdk8s synth --check-upgrade=false  # the same through the cdk8s CLI (reads cdk8s.yaml)
 *
 * The output folder is emptied first, as the cdk8s CLI does, so a file left by an earlier layout
 * never lingers: keep nothing else in dist/manifests/ (the operator bundle goes to dist/bundle/).
 */
import { rmSync } from 'node:fs';
import { App, YamlOutputType } from 'cdk8s';
import { addCharts, OUTDIR } from './chart.js';
import { loadValues, VALUES_FILE } from './values.js';

/** The values file named by `-f <file>` or `--values <file>`, else infra/values.yaml. */
function valuesFile(argv: string[]): string | URL {
  const i = argv.findIndex((a) => a === '-f' || a === '--values');
  if (i === -1) return VALUES_FILE;
  const file = argv[i + 1];
  if (!file) throw new Error(`${argv[i]} needs a values file`);
  return file;
}

function main(): void {
  const props = loadValues(valuesFile(process.argv.slice(2)));
  const app = new App({
    outdir: OUTDIR,
    // One file per chart, objects in apply order (the CRDs' file sorts first, then the
    // Namespace), so a plain `kubectl apply -f` of the folder works in one pass.
    yamlOutputType: YamlOutputType.FILE_PER_CHART,
    outputFileExtension: '.k8s.yaml',
    recordConstructMetadata: false,
  });
  // Props are validated here, before anything on disk changes.
  addCharts(app, props);
  rmSync(OUTDIR, { recursive: true, force: true });
  app.synth();
  const files = app.charts.map((chart) => `${OUTDIR}/${chart.node.id}.k8s.yaml`);
  console.error(`wrote ${files.join(' and ')} (HA ${props.ha?.enabled ? 'on' : 'off'})`);
}

try {
  main();
} catch (err) {
  console.error(`synth failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
