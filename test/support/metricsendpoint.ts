/**
 * A MetricsEndpoint on a free port with a fresh registry (createMetrics, without the process
 * metrics) and no API server behind its access reviews: for tests of what it serves and
 * registers, not of who may read it. Closed after the test.
 */
import { createMetrics, type OperatorMetrics } from '../../src/observability/metrics.js';
import { MetricsEndpoint } from '../../src/observability/metricsendpoint.js';
import type { FakeClock } from '../../src/runtime/testing/clock.js';

export interface EndpointOptions {
  /** Default '': a self-signed certificate. */
  certDir?: string;
  insecurePlainHttp?: boolean;
  clock?: FakeClock;
}

export async function startedMetricsEndpoint(
  t: { after(fn: () => unknown): void },
  options: EndpointOptions = {},
): Promise<{ metrics: OperatorMetrics; endpoint: MetricsEndpoint }> {
  const metrics = createMetrics({ defaultMetrics: false });
  const endpoint = new MetricsEndpoint({
    registry: metrics.registry,
    port: 0,
    path: '/metrics',
    certDir: options.certDir ?? '',
    insecurePlainHttp: options.insecurePlainHttp ?? false,
    api: { request: () => Promise.reject(new Error('no API server in this test')) },
    clock: options.clock,
  });
  await endpoint.start();
  t.after(() => endpoint.close());
  return { metrics, endpoint };
}
