/**
 * The Client over the API server's REST API (kube/rest.ts), which keeps its deadlines, retries
 * (429, 5xx with Retry-After) and error classification. What goes on the wire, per call:
 *
 *   get          GET    <path>
 *   list         GET    <collection>?labelSelector&fieldSelector&limit&continue
 *   create       POST   <collection>                     application/json
 *   delete       DELETE <path>  {propagationPolicy, preconditions} when given
 *   apply        PATCH  <path>?fieldManager&force          application/apply-patch+yaml
 *   applyStatus  PATCH  <path>/status?fieldManager&force   application/apply-patch+yaml
 *   patch        PATCH  <path>                             application/merge-patch+json
 *   patchStatus  PATCH  <path>/status                      application/merge-patch+json
 *
 * A patch's resourceVersion precondition is its body's metadata.resourceVersion, put first.
 */
import type { KubeObject } from '../../kube/object.js';
import type { RequestOpts } from '../../kube/rest.js';
import { resourcePath, type ResourceType } from '../../kube/resources.js';
import {
  keyOf,
  type ApplyOptions,
  type CallOptions,
  type Client,
  type DeleteOptions,
  type ListOptions,
  type MergePatch,
  type ObjectKey,
  type PatchOptions,
} from './client.js';

/** What the client needs of kube/rest.ts's RestClient. */
export interface RestTransport {
  request<T = unknown>(method: string, path: string, opts?: RequestOpts): Promise<T>;
}

const APPLY = 'application/apply-patch+yaml';
const MERGE = 'application/merge-patch+json';

export class KubeClient implements Client {
  constructor(private readonly rest: RestTransport) {}

  get<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey, options: CallOptions = {}): Promise<T> {
    return this.rest.request<T>('GET', pathOf(type, key), call(options));
  }

  async list<T extends KubeObject>(type: ResourceType<T>, options: ListOptions = {}): Promise<T[]> {
    const items: T[] = [];
    let next: string | undefined;
    do {
      const page = await this.rest.request<{ items?: T[]; metadata?: { continue?: string } }>(
        'GET',
        resourcePath(type, options.namespace),
        {
          ...call(options),
          query: { labelSelector: options.labelSelector, fieldSelector: options.fieldSelector, limit: options.limit, continue: next },
        },
      );
      items.push(...(page.items ?? []));
      next = page.metadata?.continue || undefined;
    } while (next);
    return items;
  }

  create<T extends KubeObject>(type: ResourceType<T>, obj: T, options: CallOptions = {}): Promise<T> {
    return this.rest.request<T>('POST', resourcePath(type, obj.metadata?.namespace), { body: obj, ...call(options) });
  }

  async delete<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey, options: DeleteOptions = {}): Promise<void> {
    const { propagationPolicy, preconditions } = options;
    const body = propagationPolicy === undefined && preconditions === undefined ? undefined : { propagationPolicy, preconditions };
    await this.rest.request('DELETE', pathOf(type, key), { body, ...call(options) });
  }

  apply<T extends KubeObject>(type: ResourceType<T>, obj: T, options: ApplyOptions): Promise<T> {
    return this.applyTo(pathOf(type, keyOf(obj)), obj, options);
  }

  applyStatus<T extends KubeObject>(type: ResourceType<T>, obj: T, options: ApplyOptions): Promise<T> {
    return this.applyTo(pathOf(type, keyOf(obj), 'status'), obj, options);
  }

  patch<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey, patch: MergePatch, options: PatchOptions = {}): Promise<T> {
    return this.mergePatch(pathOf(type, key), patch, options);
  }

  patchStatus<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey, patch: MergePatch, options: PatchOptions = {}): Promise<T> {
    return this.mergePatch(pathOf(type, key, 'status'), patch, options);
  }

  private applyTo<T>(path: string, obj: T, options: ApplyOptions): Promise<T> {
    return this.rest.request<T>('PATCH', path, {
      query: { fieldManager: options.fieldManager, force: options.force },
      body: obj,
      contentType: APPLY,
      ...call(options),
    });
  }

  private mergePatch<T>(path: string, patch: MergePatch, options: PatchOptions): Promise<T> {
    return this.rest.request<T>('PATCH', path, {
      body: withPrecondition(patch, options.resourceVersion),
      contentType: MERGE,
      ...call(options),
    });
  }
}

function pathOf(type: ResourceType, key: ObjectKey, subresource?: string): string {
  return resourcePath(type, key.namespace, key.name, subresource);
}

/** The transport options every call passes on (none set: none sent). */
function call(options: CallOptions): Pick<RequestOpts, 'signal' | 'timeoutMs'> {
  return { signal: options.signal, timeoutMs: options.timeoutMs };
}

/** patch, conditional on resourceVersion when given: metadata first, holding resourceVersion first. */
function withPrecondition(patch: MergePatch, resourceVersion: string | undefined): MergePatch {
  if (resourceVersion === undefined) return patch;
  const { metadata, ...rest } = patch;
  return { metadata: { resourceVersion, ...(metadata as Record<string, unknown> | undefined) }, ...rest };
}
