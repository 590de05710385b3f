/**
 * A command in an environment variable (ECHOPERATOR_CMD, BASELINE_CMD): a JSON array of strings,
 * or an error that names the variable and shows an example.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { commandFromEnv } from '../../scripts/testbed/command-env.js';

test('a command from the environment is its JSON array; unset or empty is none; anything else names the variable', (t) => {
  const name = 'ECHOPERATOR_TEST_COMMAND_ENV';
  t.after(() => delete process.env[name]);
  delete process.env[name];
  assert.equal(commandFromEnv(name), undefined);
  process.env[name] = '';
  assert.equal(commandFromEnv(name), undefined);
  process.env[name] = '["node","dist/bundle/echoperator.js"]';
  assert.deepEqual(commandFromEnv(name), ['node', 'dist/bundle/echoperator.js']);
  for (const bad of ['node x.js', '[]', '"node"', '["node",1]', '{"argv":["node"]}']) {
    process.env[name] = bad;
    assert.throws(
      () => commandFromEnv(name),
      (err: Error) =>
        err.message.startsWith(`${name} must be a JSON array of strings, e.g. '["node",`) && err.message.endsWith(`got ${bad}`),
      bad,
    );
  }
});
