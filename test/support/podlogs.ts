/**
 * What pods printed, as the bytes the API server relays from the kubelet (GET
 * /api/v1/namespaces/NS/pods/NAME/log, what `kubectl logs` reads): neither decoded nor trimmed, so
 * a test compares them byte for byte. Read in-process over one keep-alive agent, since a test
 * that reads hundreds of logs would otherwise start hundreds of kubectl processes on two cores.
 */
import { Agent, request, type RequestOptions } from 'node:https';
import type { TestContext } from 'node:test';
import { loadKubeConfig } from '../../src/kube/config.js';
import { kubeconfig } from './kube.js';

/** Deadline of one log read. */
const READ_TIMEOUT_MS = 60_000;

export type PodLogReader = (ns: string, pod: string) => Promise<Buffer>;

/** A reader of pod logs as the test's kubeconfig user, with at most `parallel` reads at a time; closed after `t`. */
export function podLogReader(t: TestContext, parallel = 8): PodLogReader {
  const kc = loadKubeConfig(kubeconfig());
  const server = new URL(kc.getCurrentCluster()!.server);
  const agent = new Agent({ keepAlive: true, maxSockets: parallel });
  t.after(() => agent.destroy());
  let auth: Promise<RequestOptions> | undefined;
  const authOptions = (): Promise<RequestOptions> => {
    auth ??= (async () => {
      const options: RequestOptions = { headers: {} };
      await kc.applyToHTTPSOptions(options);
      return options;
    })();
    return auth;
  };
  return async (ns, pod) => {
    const options = await authOptions();
    const path = `/api/v1/namespaces/${encodeURIComponent(ns)}/pods/${encodeURIComponent(pod)}/log`;
    return new Promise<Buffer>((resolve, reject) => {
      const req = request(
        { ...options, agent, host: server.hostname, port: server.port, path, method: 'GET', timeout: READ_TIMEOUT_MS },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', reject);
          res.on('end', () => {
            const body = Buffer.concat(chunks);
            if (res.statusCode === 200) resolve(body);
            else reject(new Error(`GET ${path}: ${res.statusCode}: ${body.toString('utf8').slice(0, 500)}`));
          });
        },
      );
      req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer within ${READ_TIMEOUT_MS} ms`)));
      req.on('error', reject);
      req.end();
    });
  };
}
