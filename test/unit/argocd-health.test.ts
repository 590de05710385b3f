/**
 * The Argo CD health check shipped in two places cannot drift: the argocd-cm snippet in
 * docs/gitops.md is, parsed, exactly the ConfigMap built from docs/argocd/health.lua, one key per
 * kind (what test/e2e/argocd-health*.test.ts runs on Argo CD's own VM).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../src/kube/object.js';
import { CUSTOM_RESOURCES } from '../../src/controllers/index.js';
import { argocdConfigMap, HEALTH_LUA } from '../support/argocd.js';

function docsConfigMaps(): unknown[] {
  const md = readFileSync('docs/gitops.md', 'utf8');
  const blocks = [...md.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  return blocks
    .flatMap((b) => parseAllDocuments(b).map((d) => d.toJS() as KubeObject | null))
    .filter((o) => o?.kind === 'ConfigMap' && o.metadata?.name === 'argocd-cm');
}

test('docs/gitops.md shows the argocd-cm ConfigMap made of docs/argocd/health.lua, word for word', () => {
  const found = docsConfigMaps();
  assert.equal(found.length, 1, 'one argocd-cm snippet in docs/gitops.md');
  assert.deepEqual(found[0], argocdConfigMap());
});

test('one health.lua, a script that returns hs, is the check of every custom resource the operator serves', () => {
  const script = readFileSync(HEALTH_LUA, 'utf8');
  assert.match(script, /\nreturn hs\n$/);
  const expected = CUSTOM_RESOURCES.map((k) => [`resource.customizations.health.${k.group}_${k.kind}`, script]);
  assert.deepEqual(argocdConfigMap().data, Object.fromEntries(expected));
});
