/**
 * A RestClient pointed at a local plain-HTTP server the test controls: for unit tests of the
 * transport (streams, decoding) that need real sockets but no API server. Both are closed after
 * the test.
 */
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { RestClient, type RestClientOptions } from '../../src/kube/rest.js';

export async function localRestClient(handler: RequestListener): Promise<RestClient> {
  const srv = createServer(handler);
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
  after(() => srv.close());
  return restClientOn({ after }, srv);
}

/** A RestClient for `srv`, a plain-HTTP server listening on 127.0.0.1; closed after the test `t`. */
export function restClientOn(t: { after(fn: () => unknown): void }, srv: Server, options: RestClientOptions = {}): RestClient {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: 'c', server: `http://127.0.0.1:${(srv.address() as AddressInfo).port}`, skipTLSVerify: true }],
    users: [{ name: 'u' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
  const rest = new RestClient(kc, options);
  t.after(() => rest.close());
  return rest;
}
