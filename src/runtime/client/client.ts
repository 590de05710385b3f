/**
 * The typed client reconcilers write through (controller-runtime's client.Client, kube-rs's
 * Api<K>): every call names a ResourceType<T> and deals in Ts, so a reconciler builds no REST
 * path, content type or query. Options objects, never positional flags.
 *
 * Guarantees of every implementation: a refusal rejects with the server's ApiError (classify it
 * with kube/errors.ts: isNotFound, isConflict...); a precondition that does not hold is a 409
 * Conflict and changes nothing; the object a write resolves with is the server's (its new
 * resourceVersion included).
 */
import type { KubeObject } from '../../kube/object.js';
import type { ResourceType } from '../../kube/resources.js';

/** Names one object: its namespace (namespaced kinds) and name. */
export interface ObjectKey {
  namespace?: string;
  name: string;
}

export interface CallOptions {
  /** Aborts the call (and its retries). */
  signal?: AbortSignal;
  /** Deadline of the whole call, retries included; default the transport's (30 s). */
  timeoutMs?: number;
}

export interface ListOptions extends CallOptions {
  /** undefined: across all namespaces. */
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Objects per page; the client follows `continue` to the last page. Default: the server's. */
  limit?: number;
}

/** What must still hold for a write to happen (metav1.Preconditions). */
export interface Preconditions {
  /** The object is this one, not a same-named newcomer. */
  uid?: string;
  /** The object is at this version: nobody wrote it since it was read. */
  resourceVersion?: string;
}

export interface DeleteOptions extends CallOptions {
  /** Background: the object goes at once and its dependents after it (the garbage collector). */
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  preconditions?: Preconditions;
}

export interface PatchOptions extends CallOptions {
  /**
   * Conditional on this resourceVersion (sent as the patch's metadata.resourceVersion): 409
   * Conflict when the object has changed since.
   */
  resourceVersion?: string;
}

export interface ApplyOptions extends CallOptions {
  /** Whose fields these are (managedFields' manager). */
  fieldManager: string;
  /** Take fields another manager owns instead of failing with 409 Conflict; always sent. */
  force: boolean;
}

/** A JSON merge patch (RFC 7386) of T: null removes a field. */
export type MergePatch = Record<string, unknown>;

export interface Client {
  get<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey, options?: CallOptions): Promise<T>;
  /** Every object that matches, page after page. */
  list<T extends KubeObject>(type: ResourceType<T>, options?: ListOptions): Promise<T[]>;
  /** Creates obj in its metadata.namespace; 409 AlreadyExists when the name is taken. */
  create<T extends KubeObject>(type: ResourceType<T>, obj: T, options?: CallOptions): Promise<T>;
  delete<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey, options?: DeleteOptions): Promise<void>;
  /** Server-side apply of obj (named by its metadata) as options.fieldManager. */
  apply<T extends KubeObject>(type: ResourceType<T>, obj: T, options: ApplyOptions): Promise<T>;
  /** Server-side apply of obj's status subresource. */
  applyStatus<T extends KubeObject>(type: ResourceType<T>, obj: T, options: ApplyOptions): Promise<T>;
  /** A JSON merge patch of the object. */
  patch<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey, patch: MergePatch, options?: PatchOptions): Promise<T>;
  /** A JSON merge patch of the status subresource (`patch` holds `status`). */
  patchStatus<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey, patch: MergePatch, options?: PatchOptions): Promise<T>;
}

/** The key of obj (its metadata's namespace and name). */
export function keyOf(obj: KubeObject): ObjectKey {
  return { namespace: obj.metadata?.namespace, name: obj.metadata?.name ?? '' };
}
