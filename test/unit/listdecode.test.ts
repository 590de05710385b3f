/**
 * The streaming LIST decoder (src/kube/listdecode.ts): every element of `items` parsed alone and
 * handed out as it arrives, whatever the chunking; and RestClient.list over a local HTTP server.
 */
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { ApiError } from '../../src/kube/errors.js';
import { ListDecoder, readList } from '../../src/kube/listdecode.js';
import type { RestClient } from '../../src/kube/rest.js';
import { localRestClient } from '../support/localapi.js';

/** A page with what trips a naive splitter: brackets, braces, quotes and escapes inside strings. */
const ITEMS: unknown[] = [
  { metadata: { name: 'a', annotations: { tricky: '}]},{"items":[', quote: 'say "hi" \\ ok \\\\', unicode: 'Hola, 世界! 🙂 \u2028' } } },
  { metadata: { name: 'b' }, spec: { nested: [[1, [2, { x: [] }]], {}, [], { '': '' }], empty: {} } },
  { metadata: { name: 'c', escapes: '\\"\\\\\\n\\u0041\\/' }, n: -1.5e3, t: true, f: false, z: null },
  'a string element with ] and }',
  42,
  null,
  [],
  { metadata: { name: 'last' } },
];
const BODY = JSON.stringify({
  kind: 'EchoList',
  apiVersion: 'mmontes.io/v1alpha1',
  metadata: { resourceVersion: '123', continue: 'eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzfQ==' },
  items: ITEMS,
});
// The API server's own layout (a newline after the body) and whitespace between tokens.
const SPACED = `${JSON.stringify(JSON.parse(BODY), null, 2)}\n`;

function decode(chunks: string[]): { items: unknown[]; rest: unknown } {
  const items: unknown[] = [];
  const decoder = new ListDecoder((item) => items.push(item));
  for (const c of chunks) decoder.write(c);
  return { items, rest: JSON.parse(decoder.end()) };
}

const EXPECTED_REST = { ...(JSON.parse(BODY) as object), items: [] };

describe('ListDecoder', () => {
  it('hands out every element, exactly as JSON.parse reads it, for a split at every offset', () => {
    for (const body of [BODY, SPACED]) {
      for (let at = 0; at <= body.length; at++) {
        const { items, rest } = decode([body.slice(0, at), body.slice(at)]);
        assert.deepEqual(items, ITEMS, `split at ${at}`);
        assert.deepEqual(rest, EXPECTED_REST, `split at ${at}`);
      }
    }
  });

  it('reads a body fed one character at a time', () => {
    const { items, rest } = decode([...SPACED].map((c) => c));
    assert.deepEqual(items, ITEMS);
    assert.deepEqual(rest, EXPECTED_REST);
  });

  it('hands out an element as soon as it is complete, before the body ends', () => {
    const items: unknown[] = [];
    const decoder = new ListDecoder((item) => items.push(item));
    const firstEnd = BODY.indexOf('{"metadata":{"name":"b"');
    decoder.write(BODY.slice(0, firstEnd));
    assert.equal(items.length, 1, 'the first element is out while the rest is still to come');
    decoder.write(BODY.slice(firstEnd));
    assert.equal(items.length, ITEMS.length);
  });

  it('keeps metadata written after the items, and an empty or absent items', () => {
    const after = decode(['{"items":[{"metadata":{"name":"x"}}],"metadata":{"resourceVersion":"9"}}']);
    assert.deepEqual(after, { items: [{ metadata: { name: 'x' } }], rest: { items: [], metadata: { resourceVersion: '9' } } });
    assert.deepEqual(decode(['{"items":[]}']), { items: [], rest: { items: [] } });
    assert.deepEqual(decode(['{"items":null,"kind":"List"}']), { items: [], rest: { items: null, kind: 'List' } });
    assert.deepEqual(decode(['{"metadata":{"items":[1]},"x":"items"}']), { items: [], rest: { metadata: { items: [1] }, x: 'items' } });
  });

  it('leaves items under an escaped key in the text, for the caller to find after parsing', () => {
    const { items, rest } = decode(['{"it\\u0065ms":[{"a":1}]}']);
    assert.deepEqual(items, []);
    assert.deepEqual(rest, { items: [{ a: 1 }] });
  });

  it('throws on a body that ends early or an element that is not JSON', () => {
    const truncated = new ListDecoder(() => {});
    truncated.write(BODY.slice(0, BODY.length - 10));
    assert.throws(() => truncated.end(), SyntaxError);
    const broken = new ListDecoder(() => {});
    assert.throws(() => broken.write('{"items":[{"a":tru}]}'), SyntaxError);
  });
});

describe('readList', () => {
  it('decodes a byte stream split at every byte offset (multi-byte characters cut in two)', async () => {
    const bytes = Buffer.from(BODY);
    for (let at = 0; at <= bytes.length; at += 1) {
      const items: unknown[] = [];
      const rest = await readList(Readable.from([bytes.subarray(0, at), bytes.subarray(at)], { objectMode: false }), (i) => items.push(i));
      assert.deepEqual(items, ITEMS, `split at byte ${at}`);
      assert.deepEqual(JSON.parse(rest), EXPECTED_REST);
    }
  });

  it('rejects when onItem throws, and stops reading', async () => {
    const boom = new Error('boom');
    await assert.rejects(
      readList(Readable.from([Buffer.from(BODY)]), () => {
        throw boom;
      }),
      (err) => err === boom,
    );
  });
});

describe('RestClient.list', () => {
  async function serve(status: number, body: string, chunkSize = 7): Promise<RestClient> {
    return localRestClient((req, res) => {
      req.resume();
      res.writeHead(status, { 'content-type': 'application/json' });
      // Small writes: the client sees many chunks, as with a large page.
      const bytes = Buffer.from(body);
      for (let i = 0; i < bytes.length; i += chunkSize) res.write(bytes.subarray(i, i + chunkSize));
      res.end();
    });
  }

  it('hands out the items and resolves with the list metadata', async () => {
    const rest = await serve(200, SPACED);
    const items: unknown[] = [];
    const list = await rest.list<{ metadata: { resourceVersion: string }; items: unknown[] }>('/apis/x', {}, (i) => items.push(i));
    assert.deepEqual(items, ITEMS);
    assert.equal(list.metadata.resourceVersion, '123');
    assert.deepEqual(list.items, []);
  });

  it('turns a Status error body into an ApiError and hands out no item', async () => {
    const status = {
      kind: 'Status',
      apiVersion: 'v1',
      status: 'Failure',
      reason: 'Expired',
      code: 410,
      message: 'the continue token expired: [{"items":[]}]',
    };
    const rest = await serve(410, JSON.stringify(status));
    const items: unknown[] = [];
    const err = await rest.list('/apis/x', {}, (i) => items.push(i)).catch((e: unknown) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.code, 410);
    assert.equal(err.reason, 'Expired');
    assert.deepEqual(items, []);
  });

  it('rejects (code 0) on a 200 whose body is cut short', async () => {
    const rest = await serve(200, BODY.slice(0, 200));
    const err = await rest.list('/apis/x', {}, () => {}).catch((e: unknown) => e);
    assert.ok(err instanceof ApiError);
    assert.equal(err.code, 0);
  });
});
