/**
 * A stand-in for Prometheus' kubernetes_sd_configs (role `endpointslice`), which Debian's
 * Prometheus is built without (its promtool: "field kubernetes_sd_configs not found"): the
 * namespace's EndpointSlices, read from the API server every second, written as a file_sd targets
 * file with the same `__meta_kubernetes_*` labels the kubernetes SD gives each endpoint and port
 * (not-ready endpoints included, as there), with the Service's labels (`__meta_kubernetes_service_label_*`
 * and `_labelpresent_*`, which a ServiceMonitor's selector keeps on) and each address' target
 * (`_address_target_kind`/`_name`). The scrape config's relabel_configs then run on them
 * unchanged, so the test proves the relabelling, the credentials and the TLS settings of
 * docs/monitoring.md; only the watch of the API server is this module's.
 *
 * Guarantees: the file is replaced atomically (a rename), and only when the targets change;
 * stop() ends the polling and closes the client.
 */
import { renameSync, writeFileSync } from 'node:fs';
import type { V1EndpointSlice, V1Service } from '@kubernetes/client-node';
import { loadKubeConfig, RestClient } from '../../../src/kube/index.js';

export interface FileSdGroup {
  targets: string[];
  labels: Record<string, string>;
}

/** Prometheus' label name for a Kubernetes label key (strutil.SanitizeLabelName). */
const labelName = (key: string): string => key.replace(/[^a-zA-Z0-9_]/g, '_');

/** The kubernetes SD's targets for one EndpointSlice: one per endpoint address and port; `serviceLabels` those of its Service. */
export function endpointSliceTargets(slice: V1EndpointSlice, serviceLabels: Record<string, string> = {}): FileSdGroup[] {
  const meta = slice.metadata ?? {};
  const common: Record<string, string> = {
    __meta_kubernetes_namespace: meta.namespace ?? '',
    __meta_kubernetes_endpointslice_name: meta.name ?? '',
    __meta_kubernetes_endpointslice_address_type: slice.addressType,
  };
  const service = meta.labels?.['kubernetes.io/service-name'];
  if (service) common.__meta_kubernetes_service_name = service;
  for (const [key, value] of Object.entries(serviceLabels)) {
    common[`__meta_kubernetes_service_label_${labelName(key)}`] = value;
    common[`__meta_kubernetes_service_labelpresent_${labelName(key)}`] = 'true';
  }
  const groups: FileSdGroup[] = [];
  for (const endpoint of slice.endpoints ?? []) {
    for (const port of slice.ports ?? []) {
      for (const address of endpoint.addresses) {
        const labels: Record<string, string> = {
          ...common,
          __meta_kubernetes_endpointslice_port: String(port.port ?? ''),
          __meta_kubernetes_endpointslice_port_name: port.name ?? '',
          __meta_kubernetes_endpointslice_port_protocol: port.protocol ?? 'TCP',
          __meta_kubernetes_endpointslice_endpoint_conditions_ready: String(endpoint.conditions?.ready ?? true),
        };
        if (endpoint.targetRef?.kind && endpoint.targetRef.name) {
          labels.__meta_kubernetes_endpointslice_address_target_kind = endpoint.targetRef.kind;
          labels.__meta_kubernetes_endpointslice_address_target_name = endpoint.targetRef.name;
        }
        if (endpoint.targetRef?.kind === 'Pod' && endpoint.targetRef.name) labels.__meta_kubernetes_pod_name = endpoint.targetRef.name;
        groups.push({ targets: [`${address}:${port.port}`], labels });
      }
    }
  }
  return groups;
}

export interface EndpointSliceFileSd {
  stop(): Promise<void>;
}

/** Keeps `file` holding the targets of `namespace`'s EndpointSlices until stop(). */
export function endpointSliceFileSd(o: {
  kubeconfig: string;
  namespace: string;
  file: string;
  log: (line: string) => void;
}): EndpointSliceFileSd {
  const rest = new RestClient(loadKubeConfig(o.kubeconfig), { userAgent: 'echoperator-monitoring-discovery' });
  const path = `/apis/discovery.k8s.io/v1/namespaces/${o.namespace}/endpointslices`;
  let written = '';
  const write = (text: string): void => {
    writeFileSync(`${o.file}.tmp`, text);
    renameSync(`${o.file}.tmp`, o.file);
    written = text;
  };
  write('[]\n');
  let stopping = false;
  let wake: (() => void) | undefined;
  const loop = (async () => {
    while (!stopping) {
      try {
        const slices = (await rest.request<{ items: V1EndpointSlice[] }>('GET', path)).items;
        const services = (await rest.request<{ items: V1Service[] }>('GET', `/api/v1/namespaces/${o.namespace}/services`)).items;
        const labelsOf = (slice: V1EndpointSlice): Record<string, string> =>
          services.find((svc) => svc.metadata?.name === slice.metadata?.labels?.['kubernetes.io/service-name'])?.metadata?.labels ?? {};
        const text = `${JSON.stringify(
          slices.flatMap((slice) => endpointSliceTargets(slice, labelsOf(slice))),
          null,
          1,
        )}\n`;
        if (text !== written) write(text);
      } catch (err) {
        o.log(`discovery: ${String(err)}`);
      }
      await new Promise<void>((resolve) => {
        wake = resolve;
        setTimeout(resolve, 1_000);
      });
    }
  })();
  return {
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      rest.close();
    },
  };
}
