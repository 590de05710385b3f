/**
 * kube/redact.ts (issue 32, item 6b): URL passwords and credential-named query values, in a URL,
 * in free text and in an exec plugin's arguments, are written xxxxx; anything else is left as it
 * was. And the places that quote a setting use it: the proxy setting's errors, the kubeconfig's,
 * RestClient.server, a settings error.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { RestClient } from '../../src/kube/index.js';
import { maskSecrets } from '../../src/kube/execcredential.js';
import { parseProxyUrl, proxyFor } from '../../src/kube/proxy.js';
import { REDACTED, redactArgs, redactProxy, redactText, redactUrl, scrub, secretsIn } from '../../src/kube/redact.js';
import { invalidValueMessage } from '../../src/config/parse.js';
import { SETTINGS } from '../../src/config/settings.js';

const PW = 'Sup3rS3cret';

describe('redactUrl / redactText', () => {
  it("hides a URL's password as Go's url.Redacted() does, keeping the user name", () => {
    assert.equal(redactUrl(`socks4://svc-user:${PW}@proxy.example:1080`), 'socks4://svc-user:xxxxx@proxy.example:1080');
    assert.equal(redactUrl(new URL(`https://kube:${PW}@api.example/`)), 'https://kube:xxxxx@api.example/');
    assert.equal(redactUrl(`svc-user:${PW}@proxy:3128`), 'svc-user:xxxxx@proxy:3128', 'without a scheme, as a proxy setting may be');
  });

  it('hides the whole password when it holds a raw @, up to the last @ of the authority', () => {
    assert.equal(redactUrl('http://u:p@ss@host:80/a@b'), 'http://u:xxxxx@host:80/a@b');
  });

  it('hides the values of query parameters named like a credential, and only those', () => {
    assert.equal(
      redactUrl('https://h/p?watch=1&token=abc&access_token=d&X-Amz-Signature=e&api-key=f#frag'),
      'https://h/p?watch=1&token=xxxxx&access_token=xxxxx&X-Amz-Signature=xxxxx&api-key=xxxxx#frag',
    );
  });

  it('leaves alone what holds no credential, byte for byte', () => {
    for (const text of [
      'https://user@host/ and https://host:6443/?labelSelector=a%3Db',
      'error: x@y, ns/name:tag@sha256:0123',
      'http://127.0.0.1:8080',
      'watch: too old resource version: 5 (9)',
      '',
    ]) {
      assert.equal(redactText(text), text);
    }
  });

  it('finds every URL in free text, quoted or not', () => {
    const text = `HTTPS_PROXY has the scheme socks4 ("socks4://svc-user:${PW}@p:1"); proxy=http://a:${PW}@q:2, 'b:${PW}@r:3'`;
    const out = redactText(text);
    assert.ok(!out.includes(PW), out);
    assert.equal(out, `HTTPS_PROXY has the scheme socks4 ("socks4://svc-user:xxxxx@p:1"); proxy=http://a:xxxxx@q:2, 'b:xxxxx@r:3'`);
  });
});

describe('exec plugin arguments', () => {
  const args = [
    'get-token',
    '--cluster-name',
    'prod',
    '--password',
    PW,
    `--token=${PW}-t`,
    `-client-secret=${PW}-s`,
    '--api-key',
    `${PW}-k`,
    `--endpoint=https://svc:${PW}-u@sts.example`,
    '--region=eu-west-1',
  ];

  it('hides the values of credential-named flags (--x=v and --x v) and URL passwords; keeps the rest', () => {
    assert.deepEqual(redactArgs(args), [
      'get-token',
      '--cluster-name',
      'prod',
      '--password',
      REDACTED,
      '--token=xxxxx',
      '-client-secret=xxxxx',
      '--api-key',
      REDACTED,
      '--endpoint=https://svc:xxxxx@sts.example',
      '--region=eu-west-1',
    ]);
  });

  it("collects the secrets of args and env, so a plugin's stderr that repeats them is scrubbed", () => {
    const secrets = secretsIn(args, [
      { name: 'AWS_SECRET_ACCESS_KEY', value: `${PW}-e` },
      { name: 'HOME', value: '/home/op' },
    ]);
    assert.deepEqual(secrets.sort(), [PW, `${PW}-e`, `${PW}-k`, `${PW}-s`, `${PW}-t`, `${PW}-u`].sort());
    const said = `usage error: get-token ${args.join(' ')} (env ${PW}-e), HOME=/home/op`;
    const out = scrub(said, secrets);
    assert.ok(!out.includes(PW), out);
    assert.ok(out.includes('--cluster-name prod') && out.includes('HOME=/home/op'), 'the rest is kept');
    assert.ok(!maskSecrets(`dial https://u:${PW}@h failed`).includes(PW), 'maskSecrets hides URL passwords too');
  });
});

describe('the messages that quote a URL setting', () => {
  it('a proxy setting refused for its scheme or as no URL, by env or by kubeconfig', () => {
    const messages: string[] = [];
    const refuse = (f: () => unknown): void =>
      assert.throws(f, (err: Error) => {
        messages.push(err.message);
        return true;
      });
    refuse(() => parseProxyUrl(`socks4://svc-user:${PW}@proxy.example:1080`, 'HTTPS_PROXY'));
    refuse(() => parseProxyUrl(`http://svc-user:${PW}@`, 'HTTPS_PROXY'));
    refuse(() => proxyFor(new URL('https://api.example'), `ftp://u:${PW}@p:21`, {}));
    assert.equal(messages.length, 3);
    for (const m of messages) assert.ok(!m.includes(PW) && m.includes('xxxxx'), m);
    assert.match(messages[0]!, /^HTTPS_PROXY has the scheme socks4 \("socks4:\/\/xxxxx@proxy\.example:1080"\); accepted/);
  });

  it('a proxy password with the characters that stop a URL from parsing, or end its authority: / # ? "', () => {
    let refused = 0;
    for (const c of ['/', '#', '?', '"', '/#?"', ' ', '@', '%zz']) {
      const password = `s3cr${c}et`;
      for (const value of [`http://user:${password}@proxy:3128`, `user:${password}@proxy:3128`, `socks4://user:${password}@proxy:1080`]) {
        let message: string;
        try {
          parseProxyUrl(value, 'HTTPS_PROXY');
          continue; // accepted: no message quotes it
        } catch (err) {
          message = (err as Error).message;
        }
        refused++;
        assert.ok(!message.includes('s3cr') && !message.includes(`${c}et`) && !message.includes('user'), `${value}: ${message}`);
        assert.ok(message.includes('xxxxx@proxy'), `${value}: ${message}`);
      }
    }
    assert.ok(refused >= 16, `${refused} values refused`);
  });

  it('redactProxy hides everything from the scheme to the last @, and nothing else', () => {
    assert.equal(redactProxy('http://u:s3cr/et@proxy:3128'), 'http://xxxxx@proxy:3128');
    assert.equal(redactProxy('u:s3cr"et@proxy:3128'), 'xxxxx@proxy:3128');
    assert.equal(redactProxy('http://proxy.example:3128'), 'http://proxy.example:3128', 'nothing to hide, nothing changed');
    assert.equal(redactProxy('http://u:p@proxy:3128/?token=t'), 'http://xxxxx@proxy:3128/?token=xxxxx');
  });

  it('RestClient.server, which the start-up log and the preflight and liveness messages show', () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: 'c', server: `https://kube-user:${PW}@api.example:6443/`, skipTLSVerify: false }],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const rest = new RestClient(kc, { env: {} });
    try {
      assert.equal(rest.server, 'https://kube-user:xxxxx@api.example:6443');
    } finally {
      rest.close();
    }
  });

  it('a settings error quoting a value that holds a URL password', () => {
    const message = invalidValueMessage(SETTINGS.jobImage, `http://u:${PW}@registry.example/x`);
    assert.ok(!message.includes(PW), message);
  });
});
