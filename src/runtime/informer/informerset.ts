/**
 * One logical informer over a set of namespaces: a single cluster-wide informer when all
 * namespaces are watched, else one per namespace (so RBAC can stay namespaced). Controllers see
 * it as one event source and one cache.
 */
import type { RestClient } from '../../kube/rest.js';
import { apiVersionOf, type ResourceType } from '../../kube/resources.js';
import type { EventHandler, EventSource } from '../cache/handler.js';
import type { ObjectCache } from '../cache/objectcache.js';
import { CONTROLLER_OWNER_INDEX, type KubeObject } from '../cache/store.js';
import { Informer, type InformerOptions } from './informer.js';
import type { InformerMetrics } from './reflector.js';
import { kubeListerWatcher } from './listwatch.js';

export interface InformerSetOptions<T extends KubeObject> {
  rest: RestClient;
  type: ResourceType<T>;
  /** undefined = all namespaces. */
  namespaces: string[] | undefined;
  labelSelector?: string;
  fieldSelector?: string;
  informer: Omit<InformerOptions<T>, 'listerWatcher' | 'name'>;
  /** Metrics hooks per informer, by the informer's name (e.g. "widgets/default"). */
  metrics?: (informerName: string) => InformerMetrics;
}

export class InformerSet<T extends KubeObject> implements EventSource<T>, ObjectCache<T> {
  readonly name: string;
  /** The transform every object goes through before it is cached (undefined: none). */
  readonly transform: ((obj: T) => T) | undefined;
  private readonly byNamespace = new Map<string, Informer<T>>();
  readonly informers: Informer<T>[];

  constructor(options: InformerSetOptions<T>) {
    this.name = options.type.resource;
    this.transform = options.informer.transform;
    const make = (namespace: string | undefined): Informer<T> => {
      const name = namespace ? `${options.type.resource}/${namespace}` : options.type.resource;
      return new Informer<T>({
        ...options.informer,
        name,
        metrics: options.metrics?.(name) ?? options.informer.metrics,
        expectedType: { apiVersion: apiVersionOf(options.type), kind: options.type.kind },
        listerWatcher: kubeListerWatcher<T>(options.rest, options.type, {
          namespace,
          labelSelector: options.labelSelector,
          fieldSelector: options.fieldSelector,
        }),
      });
    };
    if (options.namespaces) {
      for (const ns of options.namespaces) this.byNamespace.set(ns, make(ns));
      this.informers = [...this.byNamespace.values()];
    } else {
      this.informers = [make(undefined)];
    }
  }

  addEventHandler(handler: EventHandler<T>): void {
    for (const informer of this.informers) informer.addEventHandler(handler);
  }

  get(key: string): T | undefined {
    if (this.byNamespace.size === 0) return this.informers[0]!.store.get(key);
    const slash = key.indexOf('/');
    return this.byNamespace.get(key.slice(0, slash))?.store.get(key);
  }

  byIndex(index: typeof CONTROLLER_OWNER_INDEX, value: string): T[] {
    if (this.informers.length === 1) return this.informers[0]!.store.byIndex(index, value);
    return this.informers.flatMap((i) => i.store.byIndex(index, value));
  }

  get size(): number {
    return this.informers.reduce((n, i) => n + i.store.size, 0);
  }

  hasSynced(): boolean {
    return this.informers.every((i) => i.hasSynced());
  }

  run(signal: AbortSignal): Promise<void>[] {
    return this.informers.map((i) => i.run(signal));
  }
}

/**
 * Liveness of a set of informers: an informer's run loop never ends while the process runs
 * (errors are retried forever), so one that stopped or failed before shutdown began is dead for
 * good and only a restart of the process brings it back.
 */
export function informerLiveness(informers: readonly { name: string; state: string }[], shutdown: AbortSignal): true | string {
  if (shutdown.aborted) return true;
  const dead = informers.filter((i) => i.state === 'stopped' || i.state === 'failed');
  return dead.length === 0 || `informer stopped for good: ${dead.map((i) => `${i.name} (${i.state})`).join(', ')}`;
}
