/**
 * The Argo CD health check shipped in two places cannot drift: the argocd-cm snippet in
 * docs/gitops.md is, parsed, exactly the ConfigMap built from the Lua files in Argo CD's
 * resource_customizations layout (what test/e2e/argocd-health*.test.ts runs on Argo CD's own VM).
 */
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { test } from 'node:test';
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../src/kube/object.js';
import { argocdConfigMap, healthLuaPath, KINDS } from '../support/argocd.js';

function docsConfigMaps(): unknown[] {
  const md = readFileSync('docs/gitops.md', 'utf8');
  const blocks = [...md.matchAll(/^```yaml\n([\s\S]*?)^```$/gm)].map((m) => m[1]!);
  return blocks
    .flatMap((b) => parseAllDocuments(b).map((d) => d.toJS() as KubeObject | null))
    .filter((o) => o?.kind === 'ConfigMap' && o.metadata?.name === 'argocd-cm');
}

test("docs/gitops.md shows the argocd-cm ConfigMap made of the repository's health.lua files, word for word", () => {
  const found = docsConfigMaps();
  assert.equal(found.length, 1, 'one argocd-cm snippet in docs/gitops.md');
  assert.deepEqual(found[0], argocdConfigMap());
});

test("one health.lua per kind, in Argo CD's <group>/<Kind>/health.lua layout, each a script that returns hs", () => {
  for (const kind of KINDS) {
    assert.ok(existsSync(healthLuaPath(kind)), healthLuaPath(kind));
    assert.match(readFileSync(healthLuaPath(kind), 'utf8'), /\nreturn hs\n$/);
  }
});
