/**
 * The dashboard's JSON against Grafana's dashboard schema, as the Grafana Foundation SDK's Go
 * types hold it (scripts/lab/pictures/dashboard-schema: strict decoding, then the schema's
 * constraints). The TypeScript builders only type what they set; this reads the whole output
 * back, so a field Grafana does not know or a value of the wrong type fails here, not in Grafana.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { dashboardJson } from '../../infra/monitoring/dashboard.js';
import { ensureOwnGoBinaries } from '../../scripts/ship/gobuild.js';

const MODULE = fileURLToPath(new URL('../../scripts/lab/pictures/dashboard-schema', import.meta.url));

async function checker(log: (line: string) => void): Promise<string> {
  const [binary] = await ensureOwnGoBinaries(
    MODULE,
    {
      name: 'dashboard-schema',
      packages: ['.'],
      binaries: ['dashboard-schema'],
      describe: "the dashboard schema check (Grafana's Go types)",
    },
    log,
  );
  return binary!;
}

function check(binary: string, json: string): { status: number | null; out: string } {
  const r = spawnSync(binary, [], { input: json, encoding: 'utf8', timeout: 60_000 });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

describe('dashboard schema', () => {
  it("the dashboard decodes strictly and validates with Grafana's schema types", async (t) => {
    const binary = await checker((l) => t.diagnostic(l));
    const { status, out } = check(binary, dashboardJson());
    assert.equal(status, 0, out);
    assert.match(out, /^valid: \d+ panels$/m);
  });

  it('the check refuses an unknown field and a value of the wrong type', async (t) => {
    const binary = await checker((l) => t.diagnostic(l));
    const d = JSON.parse(dashboardJson()) as { panels: Record<string, unknown>[]; graphTooltip: unknown };
    d.panels[1]!.colour = 'red';
    d.graphTooltip = 'crosshair';
    const { status, out } = check(binary, JSON.stringify(d));
    assert.equal(status, 1, out);
    assert.match(out, /panels\[1\]\.Panel: unexpected field 'colour'/);
    assert.match(out, /graphTooltip: .*cannot unmarshal string/);
  });
});
