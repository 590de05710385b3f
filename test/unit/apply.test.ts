import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ManagedFieldsEntry } from '@kubernetes/client-node';
import { upgradedManagedFields } from '../../src/runtime/reconcile/apply.js';

const entry = (manager: string, operation: string, fieldsV1: object, extra: Partial<V1ManagedFieldsEntry> = {}): V1ManagedFieldsEntry => ({
  manager,
  operation,
  apiVersion: 'batch/v1',
  fieldsType: 'FieldsV1',
  fieldsV1,
  ...extra,
});

describe('upgradedManagedFields (an earlier POST of ours folded into our apply)', () => {
  it('moves the fields of our Update entry into our Apply entry and drops the Update entry', () => {
    const apply = entry('echoperator', 'Apply', { 'f:spec': { 'f:timeZone': {}, 'f:schedule': {} } });
    const update = entry('echoperator', 'Update', {
      'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } },
      'f:spec': { 'f:schedule': {}, 'f:suspend': {} },
    });
    const other = entry('kubectl-edit', 'Update', { 'f:spec': { 'f:suspend': {} } });
    const status = entry('echoperator', 'Update', { 'f:status': {} }, { subresource: 'status' });
    assert.deepEqual(upgradedManagedFields([update, apply, other, status], 'echoperator'), [
      {
        ...apply,
        fieldsV1: {
          'f:spec': { 'f:timeZone': {}, 'f:schedule': {}, 'f:suspend': {} },
          'f:metadata': { 'f:labels': { '.': {}, 'f:a': {} } },
        },
      },
      other,
      status,
    ]);
  });

  it('leaves alone what has nothing to fold: no Update of ours, no Apply of ours, another API version', () => {
    const apply = entry('echoperator', 'Apply', { 'f:spec': {} });
    assert.equal(upgradedManagedFields([apply, entry('someone', 'Update', { 'f:spec': {} })], 'echoperator'), undefined);
    assert.equal(upgradedManagedFields([entry('echoperator', 'Update', { 'f:spec': {} })], 'echoperator'), undefined);
    assert.equal(
      upgradedManagedFields([apply, entry('echoperator', 'Update', { 'f:spec': {} }, { apiVersion: 'batch/v1beta1' })], 'echoperator'),
      undefined,
    );
    assert.equal(upgradedManagedFields(undefined, 'echoperator'), undefined);
  });
});
