/**
 * Which Node lines `npm test` runs the unit tier on besides this one: TEST_NODE_LINES narrows the
 * supported lines, this Node's own line is left out (the main run covers it), and a value naming
 * an unsupported line stops the run with the setting's name and the accepted values.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NODE_LINES, nodeLine, nodeMajor } from '../../scripts/ship/runtimes.js';
import { selectedLines } from '../../scripts/testbed/unit-lines.js';

test('the supported lines are 22, 24 and 26, each pinned to an exact release', () => {
  assert.deepEqual(NODE_LINES.map(nodeMajor), ['22', '24', '26']);
  for (const v of NODE_LINES) assert.match(v, /^\d+\.\d+\.\d+$/);
  assert.equal(nodeLine('24'), '24.21.0');
  assert.equal(nodeLine('20'), undefined, 'Node 20 is past its end of life');
});

test('unset runs every supported line but this Node’s own', () => {
  assert.deepEqual(selectedLines({}, '20.19.5'), [...NODE_LINES]);
  assert.deepEqual(selectedLines({}, 'v24.1.0'), ['22.23.3', '26.12.1']);
});

test('a list of majors runs those; empty runs none', () => {
  assert.deepEqual(selectedLines({ TEST_NODE_LINES: '26' }, '20.19.5'), ['26.12.1']);
  assert.deepEqual(selectedLines({ TEST_NODE_LINES: ' 24, 22 ' }, '20.19.5'), ['22.23.3', '24.21.0']);
  assert.deepEqual(selectedLines({ TEST_NODE_LINES: '' }, '20.19.5'), []);
  assert.deepEqual(selectedLines({ TEST_NODE_LINES: '22' }, '22.1.0'), []);
});

test('an unsupported line stops the run naming TEST_NODE_LINES and the accepted values', () => {
  assert.throws(
    () => selectedLines({ TEST_NODE_LINES: '20,26' }, '20.19.5'),
    /^ControlPlaneError: TEST_NODE_LINES=20,26: 20 is not a supported Node line; accepted: a comma-separated list of 22, 24, 26, or empty for none$/,
  );
  assert.throws(() => selectedLines({ TEST_NODE_LINES: 'latest' }, '20.19.5'), /TEST_NODE_LINES=latest: latest is not/);
});
