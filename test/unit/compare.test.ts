/**
 * The reconcilers' comparisons of what they want with what the server holds.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { containsDesired, hasExtraListItems } from '../../src/runtime/reconcile/compare.js';

const template = (...names: string[]): unknown => ({ template: { spec: { containers: names.map((name) => ({ name, args: ['x'] })) } } });

describe('hasExtraListItems', () => {
  it('finds a list entry beyond the desired ones, at any depth', () => {
    assert.equal(hasExtraListItems(template('operator'), template('operator', 'sidecar')), true);
    assert.equal(hasExtraListItems(template('operator'), template('sidecar', 'operator')), true);
    assert.equal(
      hasExtraListItems(template('operator'), { template: { spec: { containers: [{ name: 'operator', args: ['x', 'y'] }] } } }),
      true,
    );
  });

  it('finds an entry named differently from every desired one, in a list of the same length', () => {
    // The Go echoperator's CronJob holds one container named after the ScheduledEcho: an apply of
    // ours would merge its container next to that one.
    assert.equal(hasExtraListItems(template('operator'), template('local-tick')), true);
  });

  it('is false when every list is as long as desired, whatever else the server added', () => {
    assert.equal(hasExtraListItems(template('operator'), template('operator')), false);
    assert.equal(
      hasExtraListItems(template('operator'), { template: { spec: { containers: [{ name: 'operator' }], dnsPolicy: 'ClusterFirst' } } }),
      false,
    );
    assert.equal(hasExtraListItems(template('operator'), template()), false);
    assert.equal(hasExtraListItems(template('operator'), undefined), false);
  });

  it('marks exactly what containsDesired cannot fix by an apply', () => {
    const extra = template('operator', 'sidecar');
    assert.equal(containsDesired(template('operator'), extra), false);
    assert.equal(hasExtraListItems(template('operator'), extra), true);
  });
});
