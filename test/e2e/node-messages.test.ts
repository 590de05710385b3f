/**
 * Runs on the real node: the kubelet and containerd run the Jobs' pods, and what the tests check is
 * what the pods did, read back through `kubectl logs` (the API server asks the kubelet), and the
 * outcome the real job controller gave the Job. Needs the node (ECHOPERATOR_NODE, on by default).
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyEcho, testNamespace } from '../support/kube.js';
import { ISSUE_MESSAGE } from '../support/messages.js';
import { operatorFor, phase, printed } from '../support/runs.js';

test(
  'messages come back from the pod byte for byte: shell metacharacters, $(VAR) and $$, a leading -n, non-ASCII, 4,096 characters',
  { timeout: 360_000 },
  async (t) => {
    const ns = testNamespace(t, 'node-messages', {}, { pods: true });
    await operatorFor(t, ns);
    const messages: Record<string, string> = {
      shell: `$(rm -rf /) && echo "pwned" | cat; \`id\` 'q' \\n %s %% \\ *`,
      // Issue 32: the kubelet expands $$ and $(VAR) in a command; this printed `Total: $5 host=10.0.0.1`.
      kubelet: ISSUE_MESSAGE,
      'dash-n': '-n no newline? yes, a newline',
      'dash-n-alone': '-n',
      unicode: 'Hola, 世界! Grüße 👋 — ñ',
      multiline: 'first line\n\tsecond line\n',
      longest: '世'.repeat(4096),
    };
    for (const [name, message] of Object.entries(messages)) applyEcho(ns, name, message);
    for (const [name, message] of Object.entries(messages)) {
      const echo = await phase(ns, name, 'Succeeded');
      assert.equal(printed(ns, echo), `${message}\n`, `${name}: printed exactly the message and one newline`);
    }
    assert.equal([...messages.longest!].length, 4096);
  },
);
