/**
 * Which proxy a request to the API server goes through (issue 13, defect 5): the kubeconfig's
 * proxy-url, else HTTPS_PROXY / HTTP_PROXY with NO_PROXY, read as Go's ProxyFromEnvironment
 * reads them (client-go's default). The e2e test (test/e2e/proxy.test.ts) runs the operator
 * through a real CONNECT proxy; these pin the decision table.
 */
import assert from 'node:assert/strict';
import { createServer, request } from 'node:http';
import { after, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { ProxyConfigError, proxyFor } from '../../src/kube/proxy.js';
import { RestClient } from '../../src/kube/rest.js';

const api = (server: string): URL => new URL(server);
const via = (server: string, env: Record<string, string>, proxyUrl?: string): string | undefined =>
  proxyFor(api(server), proxyUrl, env)?.href;

describe('proxy selection (client-go: proxy-url, else ProxyFromEnvironment)', () => {
  it("the kubeconfig's proxy-url wins, for every host, loopback included", () => {
    assert.equal(via('https://127.0.0.1:6443', {}, 'http://proxy:3128'), 'http://proxy:3128/');
    assert.equal(via('https://localhost:6443', { NO_PROXY: '*' }, 'socks5://proxy:1080'), 'socks5://proxy:1080');
    assert.equal(via('https://api.example:6443', { HTTPS_PROXY: 'http://other:1' }, 'https://proxy:443'), 'https://proxy/');
  });

  it('HTTPS_PROXY for https servers, HTTP_PROXY for http ones; upper case first, then lower case', () => {
    const env = { HTTPS_PROXY: 'http://secure:1', HTTP_PROXY: 'http://plain:2', https_proxy: 'http://lower:3' };
    assert.equal(via('https://api.example', env), 'http://secure:1/');
    assert.equal(via('http://api.example', env), 'http://plain:2/');
    assert.equal(via('https://api.example', { https_proxy: 'http://lower:3' }), 'http://lower:3/');
    assert.equal(via('https://api.example', { HTTP_PROXY: 'http://plain:2' }), undefined);
  });

  it('a value without a scheme means http://', () => {
    assert.equal(via('https://api.example', { HTTPS_PROXY: 'proxy.corp:3128' }), 'http://proxy.corp:3128/');
    assert.equal(via('https://api.example', { HTTPS_PROXY: '10.0.0.1:3128' }), 'http://10.0.0.1:3128/');
  });

  it('never through the environment for localhost or a loopback address', () => {
    const env = { HTTPS_PROXY: 'http://proxy:1' };
    for (const host of ['localhost', '127.0.0.1', '127.1.2.3', '[::1]']) assert.equal(via(`https://${host}:6443`, env), undefined, host);
    assert.equal(via('https://192.0.2.1:6443', env), 'http://proxy:1/');
  });

  it('NO_PROXY: names match themselves and subdomains; a leading dot or *. only subdomains', () => {
    const env = (NO_PROXY: string): Record<string, string> => ({ HTTPS_PROXY: 'http://proxy:1', NO_PROXY });
    assert.equal(via('https://example.com', env('example.com')), undefined);
    assert.equal(via('https://api.example.com', env('example.com')), undefined);
    assert.equal(via('https://notexample.com', env('example.com')), 'http://proxy:1/');
    assert.equal(via('https://example.com', env('.example.com')), 'http://proxy:1/');
    assert.equal(via('https://api.example.com', env('.example.com')), undefined);
    assert.equal(via('https://example.com', env('*.example.com')), 'http://proxy:1/');
    assert.equal(via('https://api.example.com', env(' other.org , *.EXAMPLE.com ')), undefined);
    assert.equal(via('https://anything', env('*')), undefined);
    assert.equal(via('https://api.example.com', { HTTPS_PROXY: 'http://proxy:1', no_proxy: 'example.com' }), undefined);
  });

  it('NO_PROXY: addresses and CIDR blocks match addresses only; a port narrows an entry', () => {
    const env = (NO_PROXY: string): Record<string, string> => ({ HTTPS_PROXY: 'http://proxy:1', NO_PROXY });
    assert.equal(via('https://10.1.2.3:6443', env('10.1.2.3')), undefined);
    assert.equal(via('https://10.1.2.4:6443', env('10.1.2.3')), 'http://proxy:1/');
    assert.equal(via('https://10.1.2.3:6443', env('10.0.0.0/8')), undefined);
    assert.equal(via('https://11.1.2.3:6443', env('10.0.0.0/8')), 'http://proxy:1/');
    assert.equal(via('https://[fd00::5]:6443', env('fd00::/16')), undefined);
    assert.equal(via('https://10.1.2.3:6443', env('10.1.2.3:6443')), undefined);
    assert.equal(via('https://10.1.2.3:6443', env('10.1.2.3:443')), 'http://proxy:1/');
    assert.equal(via('https://api.example.com', env('example.com:443')), undefined, 'the default port of https');
    assert.equal(via('https://api.example.com:6443', env('example.com:443')), 'http://proxy:1/');
  });

  it('a bad proxy setting is refused with its name and the accepted schemes', () => {
    assert.throws(
      () => via('https://api.example', { HTTPS_PROXY: 'ftp://proxy:21' }),
      (err: unknown) => {
        assert.ok(err instanceof ProxyConfigError);
        assert.match(err.message, /HTTPS_PROXY has the scheme ftp .*accepted: http, https, socks5/);
        return true;
      },
    );
    assert.throws(() => via('https://api.example', {}, 'gopher://x:1'), /proxy-url has the scheme gopher/);
    assert.throws(() => via('https://api.example', { https_proxy: 'http://[::1' }), /https_proxy is not a proxy URL/);
  });
});

describe('requests through an http:// proxy', () => {
  it("an http:// server is asked in absolute form, as Go's transport does, with the query intact", async () => {
    const api = createServer((req, res) => res.end(JSON.stringify({ path: req.url, host: req.headers.host })));
    const seen: string[] = [];
    // A forward proxy: takes the absolute-form target and asks the server for it.
    const proxy = createServer((req, res) => {
      seen.push(req.url ?? '');
      const target = new URL(req.url ?? '');
      request({ hostname: target.hostname, port: target.port, path: target.pathname + target.search, headers: req.headers }, (up) =>
        up.pipe(res),
      ).end();
    });
    for (const srv of [api, proxy]) await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve));
    after(() => {
      api.close();
      proxy.close();
    });
    const port = (s: typeof api): number => (s.address() as { port: number }).port;
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        { name: 'c', server: `http://127.0.0.1:${port(api)}/prefix`, skipTLSVerify: true, proxyUrl: `http://127.0.0.1:${port(proxy)}` },
      ],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const rest = new RestClient(kc);
    after(() => rest.close());
    const answer = await rest.request<{ path: string; host: string }>('GET', '/api/v1/pods', {
      query: { labelSelector: 'a=b,c in (d)', limit: 5 },
    });
    const expected = '/prefix/api/v1/pods?labelSelector=a%3Db%2Cc%20in%20(d)&limit=5';
    assert.deepEqual(seen, [`http://127.0.0.1:${port(api)}${expected}`]);
    assert.deepEqual(answer, { path: expected, host: `127.0.0.1:${port(api)}` });
  });
});
