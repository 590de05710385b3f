/**
 * The cdk8s app: synthesizes the install described by infra/values.yaml (ha.enabled, or
 * ECHOPERATOR_HA=true|false to override it) into dist/manifests/: echoperator-crds.k8s.yaml (the
 * CRDs) and echoperator.k8s.yaml (everything else), so a GitOps repository can sync the CRDs
 * apart, with pruning off; `kubectl apply --server-side -f dist/manifests/` applies both.
 *
 *   npm run synth                      # tsx infra/main.ts
 *   ECHOPERATOR_HA=true npm run synth  # the HA variant
 *   npm run synth -- -f my-values.yaml # a values file merged over infra/values.yaml (as helm -f)
 *   npm run synth -- --set ha.enabled=true,numWorkers=8   # Helm's --set syntax (infra/set-values.ts)
 *   npm run synth -- --release-name team-a  # Helm's release name: objects team-a-echoperator
 *   npm run synth -- --help            # usage; an unknown argument is refused
 *   cdk8s synth --check-upgrade=false  # the same through the cdk8s CLI (reads cdk8s.yaml)
 *
 * The output folder is emptied first, as the cdk8s CLI does, so a file left by an earlier layout
 * never lingers: keep nothing else in dist/manifests/ (the operator bundle goes to dist/bundle/).
 */
import { rmSync } from 'node:fs';
import { App, YamlOutputType } from 'cdk8s';
import { Command, CommanderError } from 'commander';
import { addCharts, OUTDIR } from './chart.js';
import { DEFAULT_RELEASE_NAME, HA_ENV, valuesFromSources } from './values.js';

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

/** The command line, as Helm's: `-f` files merged in order, then `--set`, then `--set-string`. */
function commandLine(): Command {
  return new Command('synth')
    .description(
      `Synthesizes the install into ${OUTDIR}/ from infra/values.yaml, the values files and the --set arguments ` +
        `(later ones win, as with helm), then ${HA_ENV}=true|false over ha.enabled.`,
    )
    .option('-f, --values <file>', 'a values file merged over infra/values.yaml (repeatable, as helm -f)', collect)
    .option('--set <key=value>', "set values, Helm's syntax: a.b=1,c={x,y},d[0]=z (repeatable)", collect)
    .option('--set-string <key=value>', 'as --set, every value a string (repeatable)', collect)
    .option(
      '--release-name <name>',
      "Helm's release name: the app.kubernetes.io/instance label, and the objects' names with nameOverride and fullnameOverride",
      DEFAULT_RELEASE_NAME,
    )
    .allowExcessArguments(false)
    .exitOverride()
    .configureOutput({ writeErr: (text) => process.stderr.write(text) });
}

function main(argv: string[]): void {
  const program = commandLine();
  try {
    program.parse(argv, { from: 'user' });
  } catch (err) {
    // --help printed usage (exit 0); an unknown or incomplete argument printed its error (exit 1).
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    throw err;
  }
  const options = program.opts<{ values?: string[]; set?: string[]; setString?: string[]; releaseName: string }>();
  const props = valuesFromSources({
    files: options.values,
    set: options.set,
    setString: options.setString,
    releaseName: options.releaseName,
  });
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
  main(process.argv.slice(2));
} catch (err) {
  console.error(`synth failed: ${err instanceof Error ? err.message : String(err)}`);
  process.exitCode = 1;
}
