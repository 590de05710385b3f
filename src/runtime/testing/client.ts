/**
 * A Client (runtime/client) that keeps objects in memory and answers as the API server would, for reconciler tests
 * (controller-runtime's fake client, client-go's fake clientset). Objects in (add), what was
 * written out (writes), the server's copy readable (stored).
 *
 * Guarantees: every write gives the object a resourceVersion greater than any before (and a uid
 * on create); a precondition that does not hold (a resourceVersion or uid, in a delete's
 * preconditions, a merge patch's metadata.resourceVersion or an apply's metadata) is refused
 * with 409 Conflict and changes nothing; reading, patching or deleting a missing object is a 404;
 * creating a taken name a 409 AlreadyExists; a server-side apply creates the object or merges
 * into it field by field at the top level (metadata key by key); a merge patch is RFC 7386.
 * Refused writes are not recorded. Reactors (client-go's PrependReactor) answer a request first.
 */
import { ApiError } from '../../kube/errors.js';
import type { KubeObject } from '../../kube/object.js';
import type { ResourceType } from '../../kube/resources.js';
import { keyOf } from '../client/client.js';
import type * as api from '../client/client.js';
import { mergePatch } from './mergepatch.js';

export type FakeVerb = 'get' | 'list' | 'create' | 'delete' | 'apply' | 'applyStatus' | 'patch' | 'patchStatus';

/** One request as the fake client got it. */
export interface FakeRequest {
  verb: FakeVerb;
  type: ResourceType;
  /** namespace/name, or the namespace (or '') of a list. */
  key: string;
  /** What was sent: the object, or the patch. */
  body?: unknown;
  options?: api.CallOptions;
}

/** Answers a request before the store does: an error to throw, or undefined to go on. */
export type Reactor = (request: FakeRequest) => Error | undefined;

const keyString = (key: api.ObjectKey): string => (key.namespace ? `${key.namespace}/${key.name}` : key.name);

export class FakeClient implements api.Client {
  /** Every write the store accepted, in order. */
  readonly writes: FakeRequest[] = [];
  private readonly objects = new Map<string, KubeObject>();
  private readonly reactors: { verb: FakeVerb; reactor: Reactor }[] = [];
  private version = 100;
  private uids = 0;

  /** Puts obj in the store as it is (a resourceVersion given if it has none). */
  add<T extends KubeObject>(type: ResourceType<T>, obj: T): T {
    const stored = { ...obj, metadata: { resourceVersion: this.nextVersion(), ...obj.metadata } };
    this.objects.set(this.id(type, keyString(keyOf(obj))), stored);
    return stored;
  }

  /** The server's copy, undefined when there is none. */
  stored<T extends KubeObject>(type: ResourceType<T>, key: string): T | undefined {
    return this.objects.get(this.id(type, key)) as T | undefined;
  }

  /** Every stored object of `type`. */
  all<T extends KubeObject>(type: ResourceType<T>): T[] {
    const prefix = this.id(type, '');
    return [...this.objects.entries()].filter(([id]) => id.startsWith(prefix)).map(([, obj]) => obj as T);
  }

  /** Removes the server's copy (someone else deleted it). */
  remove(type: ResourceType, key: string): void {
    this.objects.delete(this.id(type, key));
  }

  /** Runs `reactor` on each request of `verb` before the store does, first added first. */
  prependReactor(verb: FakeVerb, reactor: Reactor): void {
    this.reactors.unshift({ verb, reactor });
  }

  /** The next `verb` (of `type`, when given) fails with err; later ones go on. */
  failNext(verb: FakeVerb, err: Error, type?: ResourceType): void {
    let used = false;
    this.prependReactor(verb, (request) => {
      if (used || (type && request.type.resource !== type.resource)) return undefined;
      used = true;
      return err;
    });
  }

  async get<T extends KubeObject>(type: ResourceType<T>, key: api.ObjectKey, options?: api.CallOptions): Promise<T> {
    this.react({ verb: 'get', type, key: keyString(key), options });
    return this.found(type, keyString(key));
  }

  async list<T extends KubeObject>(type: ResourceType<T>, options: api.ListOptions = {}): Promise<T[]> {
    this.react({ verb: 'list', type, key: options.namespace ?? '', options });
    return this.all(type).filter((o) => !options.namespace || o.metadata?.namespace === options.namespace);
  }

  async create<T extends KubeObject>(type: ResourceType<T>, obj: T, options?: api.CallOptions): Promise<T> {
    const request = this.react({ verb: 'create', type, key: keyString(keyOf(obj)), body: obj, options });
    if (this.stored(type, request.key)) throw refusal(409, 'AlreadyExists', `${type.resource} "${obj.metadata?.name}" already exists`);
    this.uids++;
    return this.store(request, { ...obj, metadata: { ...obj.metadata, uid: `uid-${this.uids}` } });
  }

  async delete<T extends KubeObject>(type: ResourceType<T>, key: api.ObjectKey, options: api.DeleteOptions = {}): Promise<void> {
    const request = this.react({ verb: 'delete', type, key: keyString(key), body: options.preconditions, options });
    const existing = this.found(type, request.key);
    holds(existing, options.preconditions);
    this.objects.delete(this.id(type, request.key));
    this.writes.push(request);
  }

  async apply<T extends KubeObject>(type: ResourceType<T>, obj: T, options: api.ApplyOptions): Promise<T> {
    return this.applied({ verb: 'apply', type, key: keyString(keyOf(obj)), body: obj, options }, obj, (existing) => ({
      ...existing,
      ...obj,
      metadata: { ...existing.metadata, ...obj.metadata },
    }));
  }

  async applyStatus<T extends KubeObject>(type: ResourceType<T>, obj: T, options: api.ApplyOptions): Promise<T> {
    const status = (obj as { status?: unknown }).status;
    return this.applied({ verb: 'applyStatus', type, key: keyString(keyOf(obj)), body: obj, options }, obj, (existing) => ({
      ...existing,
      status: mergePatch((existing as { status?: unknown }).status, status),
    }));
  }

  async patch<T extends KubeObject>(
    type: ResourceType<T>,
    key: api.ObjectKey,
    patch: api.MergePatch,
    options: api.PatchOptions = {},
  ): Promise<T> {
    return this.patched<T>({ verb: 'patch', type, key: keyString(key), body: patch, options }, options.resourceVersion, patch);
  }

  async patchStatus<T extends KubeObject>(
    type: ResourceType<T>,
    key: api.ObjectKey,
    patch: api.MergePatch,
    options: api.PatchOptions = {},
  ): Promise<T> {
    // Only status: the status subresource ignores the rest of a patch.
    return this.patched<T>({ verb: 'patchStatus', type, key: keyString(key), body: patch, options }, options.resourceVersion, {
      status: patch.status,
    });
  }

  private patched<T extends KubeObject>(request: FakeRequest, resourceVersion: string | undefined, patch: api.MergePatch): T {
    this.react(request);
    const existing = this.found<T>(request.type as ResourceType<T>, request.key);
    holds(existing, { resourceVersion });
    return this.store(request, mergePatch(existing, patch) as T);
  }

  /** An apply: conditional on the uid and resourceVersion the object carries; creates or merges. */
  private applied<T extends KubeObject>(request: FakeRequest, obj: T, merge: (existing: T) => T): T {
    this.react(request);
    const existing = this.stored(request.type as ResourceType<T>, request.key);
    const { uid, resourceVersion } = obj.metadata ?? {};
    if (!existing) {
      if (uid !== undefined) throw refusal(409, 'Conflict', `Precondition failed: UID in precondition: ${uid}, UID in object meta: `);
      if (request.verb === 'applyStatus') throw refusal(404, 'NotFound', `${request.type.resource} "${request.key}" not found`);
      this.uids++;
      return this.store(request, { ...obj, metadata: { ...obj.metadata, uid: `uid-${this.uids}`, resourceVersion: undefined } });
    }
    holds(existing, { uid, resourceVersion });
    return this.store(request, merge(existing));
  }

  private react(request: FakeRequest): FakeRequest {
    for (const { verb, reactor } of this.reactors) {
      const err = verb === request.verb ? reactor(request) : undefined;
      if (err) throw err;
    }
    return request;
  }

  private store<T extends KubeObject>(request: FakeRequest, obj: T): T {
    const stored = { ...obj, metadata: { ...obj.metadata, resourceVersion: this.nextVersion() } };
    this.objects.set(this.id(request.type, request.key), stored);
    this.writes.push(request);
    return stored;
  }

  private found<T extends KubeObject>(type: ResourceType<T>, key: string): T {
    const obj = this.stored(type, key);
    if (!obj) throw refusal(404, 'NotFound', `${type.resource} "${key}" not found`);
    return obj;
  }

  private nextVersion(): string {
    return String(++this.version);
  }

  private id(type: ResourceType, key: string): string {
    return `${type.group}/${type.resource}|${key}`;
  }
}

/** Throws the server's 409 when a precondition does not hold of `existing`. */
function holds(existing: KubeObject, preconditions: api.Preconditions = {}): void {
  const { uid, resourceVersion } = preconditions;
  if (uid !== undefined && uid !== existing.metadata?.uid) {
    throw refusal(409, 'Conflict', `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${existing.metadata?.uid}`);
  }
  if (resourceVersion !== undefined && resourceVersion !== existing.metadata?.resourceVersion) {
    throw refusal(409, 'Conflict', 'the object has been modified; please apply your changes to the latest version and try again');
  }
}

/** An ApiError carrying a Status, as the server answers. */
export function refusal(code: number, reason: string, message: string): ApiError {
  return new ApiError(code, reason, message, { kind: 'Status', status: 'Failure', code, reason, message });
}
