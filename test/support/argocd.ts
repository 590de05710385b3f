/**
 * Argo CD's health check for the operator's kinds, as shipped: one Lua script for every kind
 * (docs/argocd/health.lua: it reads only the status conditions every kind of ours writes), the
 * argocd-cm ConfigMap that names it once per kind (docs/gitops.md shows it; a unit test keeps the
 * two equal), and Argo CD's answer for an object, from Argo CD's own code: the harness in
 * scripts/testbed/controlplane/gomod/argocd-health, built into the per-user cache (`npm test` builds it
 * before any test starts).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureArgoCdHealth } from '../../scripts/testbed/controlplane/assets.js';

export const GROUP = 'mmontes.io';
export const KINDS = ['Echo', 'ScheduledEcho'] as const;

/** The health check of every kind in KINDS. */
export const HEALTH_LUA = join('docs', 'argocd', 'health.lua');

/** The argocd-cm ConfigMap that adds the check: one `resource.customizations.health.<group>_<Kind>` key per kind, each HEALTH_LUA. */
export function argocdConfigMap(): Record<string, unknown> {
  const script = readFileSync(HEALTH_LUA, 'utf8');
  const data = Object.fromEntries(KINDS.map((k) => [`resource.customizations.health.${GROUP}_${k}`, script]));
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'argocd-cm', namespace: 'argocd' }, data };
}

export interface ArgoCdHealth {
  status: string;
  message: string;
}

/** Argo CD's health of `obj` (an object as read from the cluster) under argocdConfigMap(). */
export async function argoCdHealth(obj: unknown): Promise<ArgoCdHealth> {
  const harness = await ensureArgoCdHealth();
  const dir = mkdtempSync(join(tmpdir(), 'argocd-cm-'));
  try {
    const cm = join(dir, 'argocd-cm.json');
    writeFileSync(cm, JSON.stringify(argocdConfigMap()));
    const r = spawnSync(harness, ['--argocd-cm', cm], { input: JSON.stringify(obj), encoding: 'utf8', timeout: 30_000 });
    if (r.status !== 0) throw new Error(`argocd-health failed (${r.status ?? r.signal}): ${r.stderr.trim()} ${r.error ?? ''}`);
    return JSON.parse(r.stdout) as ArgoCdHealth;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
