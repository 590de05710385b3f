/**
 * KubeClient on the wire: each call's method, path, query, content type and body, exactly (the
 * body as JSON text, so that the order of its fields is checked too).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Job } from '@kubernetes/client-node';
import { ECHOS, type Echo } from '../../src/api/echo.js';
import type { RequestOpts } from '../../src/kube/rest.js';
import { JOBS } from '../../src/kube/resources.js';
import { KubeClient } from '../../src/runtime/client/index.js';

interface Sent {
  method: string;
  path: string;
  query?: RequestOpts['query'];
  contentType?: string;
  body?: string;
}

/** Records each request and answers with `answers` in turn (else an empty object). */
function recording(answers: unknown[] = []) {
  const sent: Sent[] = [];
  const rest = {
    request<T>(method: string, path: string, opts: RequestOpts = {}): Promise<T> {
      const entry: Sent = { method, path };
      if (opts.query) entry.query = opts.query;
      if (opts.contentType) entry.contentType = opts.contentType;
      if (opts.body !== undefined) entry.body = JSON.stringify(opts.body);
      sent.push(entry);
      return Promise.resolve((answers.shift() ?? {}) as T);
    },
  };
  return { sent, client: new KubeClient(rest) };
}

const job: V1Job = { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'j', namespace: 'ns' }, spec: { template: {} } };

describe('KubeClient', () => {
  it('reads: get one object, list every page', async () => {
    const { sent, client } = recording([{}, { items: [job], metadata: { continue: 'c1' } }, { items: [job], metadata: {} }]);
    await client.get(JOBS, { namespace: 'ns', name: 'j' });
    assert.equal((await client.list(JOBS, { namespace: 'ns', labelSelector: 'a=b', limit: 1 })).length, 2);
    assert.deepEqual(sent, [
      { method: 'GET', path: '/apis/batch/v1/namespaces/ns/jobs/j' },
      {
        method: 'GET',
        path: '/apis/batch/v1/namespaces/ns/jobs',
        query: { labelSelector: 'a=b', fieldSelector: undefined, limit: 1, continue: undefined },
      },
      {
        method: 'GET',
        path: '/apis/batch/v1/namespaces/ns/jobs',
        query: { labelSelector: 'a=b', fieldSelector: undefined, limit: 1, continue: 'c1' },
      },
    ]);
  });

  it('creates with a POST to the collection, deletes with preconditions and propagation in the body', async () => {
    const { sent, client } = recording();
    await client.create(JOBS, job);
    await client.delete(JOBS, { namespace: 'ns', name: 'j' }, { propagationPolicy: 'Background', preconditions: { uid: 'u1' } });
    await client.delete(JOBS, { namespace: 'ns', name: 'j' });
    assert.deepEqual(sent, [
      { method: 'POST', path: '/apis/batch/v1/namespaces/ns/jobs', body: JSON.stringify(job) },
      {
        method: 'DELETE',
        path: '/apis/batch/v1/namespaces/ns/jobs/j',
        body: '{"propagationPolicy":"Background","preconditions":{"uid":"u1"}}',
      },
      { method: 'DELETE', path: '/apis/batch/v1/namespaces/ns/jobs/j' },
    ]);
  });

  it('applies as the field manager, force always sent; merge-patches with the resourceVersion first in metadata', async () => {
    const { sent, client } = recording();
    const echo: Echo = {
      apiVersion: 'mmontes.io/v1alpha1',
      kind: 'Echo',
      metadata: { name: 'e', namespace: 'ns' },
      spec: { message: 'hi' },
    };
    await client.apply(JOBS, job, { fieldManager: 'me', force: false });
    await client.applyStatus(ECHOS, echo, { fieldManager: 'me', force: true });
    await client.patch(JOBS, { namespace: 'ns', name: 'j' }, { metadata: { managedFields: [] } }, { resourceVersion: '7' });
    await client.patchStatus(ECHOS, { namespace: 'ns', name: 'e' }, { status: { phase: 'Pending' } }, { resourceVersion: '8' });
    await client.patchStatus(ECHOS, { namespace: 'ns', name: 'e' }, { status: {} });
    const merge = 'application/merge-patch+json';
    const apply = 'application/apply-patch+yaml';
    const echoPath = '/apis/mmontes.io/v1alpha1/namespaces/ns/echos/e/status';
    assert.deepEqual(sent, [
      {
        method: 'PATCH',
        path: '/apis/batch/v1/namespaces/ns/jobs/j',
        query: { fieldManager: 'me', force: false },
        contentType: apply,
        body: JSON.stringify(job),
      },
      { method: 'PATCH', path: echoPath, query: { fieldManager: 'me', force: true }, contentType: apply, body: JSON.stringify(echo) },
      {
        method: 'PATCH',
        path: '/apis/batch/v1/namespaces/ns/jobs/j',
        contentType: merge,
        body: '{"metadata":{"resourceVersion":"7","managedFields":[]}}',
      },
      { method: 'PATCH', path: echoPath, contentType: merge, body: '{"metadata":{"resourceVersion":"8"},"status":{"phase":"Pending"}}' },
      { method: 'PATCH', path: echoPath, contentType: merge, body: '{"status":{}}' },
    ]);
  });
});
