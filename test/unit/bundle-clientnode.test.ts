/**
 * The bundle's slice of client-node (scripts/ship/bundle-clientnode.ts): KubeConfig's auth-provider
 * plugins still work, loaded on first use; makeApiClient and the generated API's undici dispatcher
 * say they are not in the bundle; nothing of the generated API, nor undici, is bundled.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import * as esbuild from 'esbuild';
import { clientNodeKubeConfigOnly } from '../../scripts/ship/bundle-clientnode.js';
import { scratchDir } from '../support/scratch.js';

const ENTRY = `
import { KubeConfig, V1MicroTime } from '@kubernetes/client-node';
const jwt = (exp) => ['{"alg":"none"}', JSON.stringify({ exp })].map((p) => Buffer.from(p).toString('base64url')).join('.') + '.x';
const user = (name, authProvider) => ({ name, authProvider });
const kc = new KubeConfig();
kc.loadFromOptions({
  clusters: [{ name: 'c', server: 'https://api.example:6443' }, { name: 'insecure', server: 'https://api.example:6443', skipTLSVerify: true }],
  users: [
    user('azure', { name: 'azure', config: { 'access-token': 'azure-token' } }),
    user('gcp', { name: 'gcp', config: { 'access-token': 'gcp-token', expiry: '2999-01-01T00:00:00Z' } }),
    user('oidc', { name: 'oidc', config: { 'id-token': jwt(32503680000), 'client-id': 'x' } }),
  ],
  contexts: [...['azure', 'gcp', 'oidc'].map((u) => ({ name: u, cluster: 'c', user: u })), { name: 'insecure', cluster: 'insecure', user: 'azure' }],
  currentContext: 'azure',
});
(async () => {
  const out = {};
  for (const ctx of ['azure', 'gcp', 'oidc']) {
    kc.setCurrentContext(ctx);
    const opts = { headers: {} };
    await kc.applyToHTTPSOptions(opts);
    out[ctx] = opts.headers.Authorization;
  }
  try { kc.makeApiClient(class {}); out.makeApiClient = 'returned'; } catch (err) { out.makeApiClient = err.message; }
  kc.setCurrentContext('insecure');
  try {
    await kc.applySecurityAuthentication({ setHeaderParam() {}, setDispatcher() {} });
    out.dispatcher = 'returned';
  } catch (err) { out.dispatcher = err.message; }
  out.microTime = new V1MicroTime(0).toISOString();
  console.log(JSON.stringify(out));
})();
`;

describe('the bundle holds only KubeConfig of client-node', () => {
  const dir = scratchDir('bundle-clientnode');

  it('auth-provider plugins load on first use and work; makeApiClient says it is absent; no generated API', async () => {
    // Inside the repository, so that @kubernetes/client-node resolves from its node_modules.
    const entry = join(process.cwd(), `.bundle-clientnode-test-${process.pid}.mjs`);
    after(() => rmSync(entry, { force: true }));
    writeFileSync(entry, ENTRY);
    const outfile = join(dir, 'out.cjs');
    const result = await esbuild.build({
      entryPoints: [entry],
      bundle: true,
      platform: 'node',
      target: 'node20',
      format: 'cjs',
      outfile,
      metafile: true,
      plugins: [clientNodeKubeConfigOnly],
      external: ['bufferutil', 'utf-8-validate', 'supports-color', 'encoding'],
      logLevel: 'error',
    });
    const inputs = Object.keys(result.metafile.inputs);
    assert.deepEqual(
      inputs.filter((i) => i.includes('client-node/dist/gen/')),
      [],
      'no generated API client in the bundle',
    );
    assert.deepEqual(
      inputs.filter((i) => i.includes('node_modules/undici/')),
      [],
      "no undici (client-node's fetch dispatcher) in the bundle",
    );
    const out = JSON.parse(execFileSync(process.execPath, [outfile], { encoding: 'utf8' })) as Record<string, string>;
    assert.equal(out.azure, 'Bearer azure-token');
    assert.equal(out.gcp, 'Bearer gcp-token');
    assert.match(out.oidc ?? '', /^Bearer ey/);
    assert.match(out.makeApiClient ?? '', /makeApiClient is not part of the echoperator bundle/);
    assert.match(out.dispatcher ?? '', /undici dispatcher is not part of the echoperator bundle/);
    assert.equal(out.microTime, '1970-01-01T00:00:00.000000Z');
  });
});
