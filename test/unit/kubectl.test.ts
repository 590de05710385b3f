/**
 * The one kubectl helper (scripts/testbed/kubectl.ts), against a stand-in kubectl on PATH: it passes the
 * kubeconfig and namespace first, feeds stdin, parses JSON, and its errors name the command and
 * kubectl's message, or say to install kubectl when there is none.
 */
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { KubectlError, kubectlFor } from '../../scripts/testbed/kubectl.js';
import { scratchDir } from '../support/scratch.js';

/** A folder holding a `kubectl` that prints its arguments and stdin as JSON, fails when asked to `fail`, and hangs when asked to `hang`. */
function standInKubectl(): string {
  const dir = scratchDir('kubectl');
  writeFileSync(
    join(dir, 'kubectl'),
    [
      '#!/bin/sh',
      'for a in "$@"; do [ "$a" = fail ] && { echo "error: told to fail" >&2; exit 2; }; done',
      'for a in "$@"; do [ "$a" = hang ] && exec sleep 300; done',
      'stdin=$(cat)',
      'printf \'{"args":"%s","stdin":"%s"}\' "$*" "$stdin"',
      '',
    ].join('\n'),
    { mode: 0o755 },
  );
  return dir;
}

test('run, ok, json and okAsync pass the kubeconfig and namespace and feed stdin', async () => {
  const dir = standInKubectl();
  const env = { PATH: `${dir}:${process.env.PATH}` };
  const k = kubectlFor('/tmp/example.kubeconfig');
  assert.deepEqual(k.json(['get', 'pods'], { namespace: 'team-a', input: 'hello', env }), {
    args: '--kubeconfig /tmp/example.kubeconfig -n team-a get pods -o json',
    stdin: 'hello',
  });
  assert.equal(k.run(['version'], { env }).code, 0);
  assert.deepEqual(JSON.parse(await k.okAsync(['apply', '-f', '-'], { input: 'x', env })), {
    args: '--kubeconfig /tmp/example.kubeconfig apply -f -',
    stdin: 'x',
  });
});

test('a failing kubectl is a KubectlError naming the command and its message, sync and async', async () => {
  const dir = standInKubectl();
  const env = { PATH: `${dir}:${process.env.PATH}` };
  const k = kubectlFor('/tmp/example.kubeconfig');
  const expected = (err: unknown): boolean =>
    err instanceof KubectlError && err.message === 'kubectl get fail failed (2): error: told to fail' && err.result.code === 2;
  assert.throws(() => k.ok(['get', 'fail'], { env }), expected);
  await assert.rejects(k.okAsync(['get', 'fail'], { env }), expected);
  // With input it does not read: the broken pipe is no crash, the exit code tells.
  await assert.rejects(k.okAsync(['get', 'fail'], { env, input: 'x'.repeat(1 << 20) }), expected);
  assert.throws(() => k.ok(['get', 'fail'], { env, input: 'x'.repeat(1 << 20) }), expected);
  assert.equal(k.run(['get', 'fail'], { env }).code, 2);
});

test('a kubectl that outlives its deadline is killed and is an error, sync and async', async () => {
  const dir = standInKubectl();
  const env = { PATH: `${dir}:${process.env.PATH}` };
  const k = kubectlFor('/tmp/example.kubeconfig', { timeoutMs: 200 });
  assert.throws(() => k.ok(['get', 'hang'], { env }), KubectlError);
  await assert.rejects(k.okAsync(['get', 'hang'], { env }), /killed by SIGKILL/);
});

test('no kubectl on PATH: the error says to install it', async () => {
  const env = { PATH: scratchDir('empty-path') };
  const k = kubectlFor('/tmp/example.kubeconfig');
  assert.throws(() => k.ok(['version'], { env }), /could not run kubectl: .*install kubectl and put it on PATH/);
  await assert.rejects(k.okAsync(['version'], { env }), /could not run kubectl: .*install kubectl and put it on PATH/);
});
