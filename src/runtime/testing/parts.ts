/**
 * What a manager hands a declared controller's reconciler (its caches, client and event
 * recorder), over a FakeClient, so a test runs a reconciler exactly as its declaration makes it:
 * one FakeCache per declared kind, letting in what the declaration's label selector selects and
 * keeping what its transform keeps (the informers' default strip when it names none), the
 * primary's reading its own writes as the manager's does. sync() is the informers catching up
 * with the client's store.
 */
import type { KubeObject } from '../../kube/object.js';
import type { ResourceType } from '../../kube/resources.js';
import { declaredCaches } from '../controller/caches.js';
import type { ControllerSpec, ManagerParts } from '../controller/declaration.js';
import { stripForCache } from '../informer/informer.js';
import { FakeCache } from './cache.js';
import type { FakeClient } from './client.js';
import { FakeEventRecorder } from './events.js';

export interface FakeManagerParts {
  parts: ManagerParts;
  events: FakeEventRecorder;
  /** The caches take in what the client's store now holds. */
  sync(): void;
}

interface Declared {
  type: ResourceType;
  labelSelector?: string;
  transform?: (obj: KubeObject) => KubeObject;
}

export function fakeManagerParts(spec: ControllerSpec, client: FakeClient): FakeManagerParts {
  const events = new FakeEventRecorder();
  const cacheOf = (declared: Declared, readYourWrites: boolean) => ({
    type: declared.type,
    cache: new FakeCache<KubeObject>({
      readYourWrites,
      filter: selects(declared.labelSelector),
      transform: declared.transform ?? stripForCache,
    }),
  });
  const primary = cacheOf({ type: spec.primary, transform: spec.primaryTransform }, true);
  const owned = spec.owned.map((o) => cacheOf(o, false));
  const watched = spec.watched.map((w) => cacheOf(w, false));
  return {
    parts: {
      client,
      events,
      caches: declaredCaches(spec.name, { primary, owned, watched }),
    },
    events,
    sync: () => {
      for (const { type, cache } of [primary, ...owned, ...watched]) cache.syncFrom(client, type);
    },
  };
}

/**
 * An equality-based label selector (`k=v`, `k==v`, `k!=v`, `k`, `!k`, comma-separated) as a
 * predicate; set-based selectors (`in`, `notin`) are refused rather than misread.
 */
export function selects(selector: string | undefined): (obj: KubeObject) => boolean {
  if (!selector) return () => true;
  const terms = selector.split(',').map((term) => {
    const t = term.trim();
    if (/\s(in|notin)\s/.test(t)) throw new Error(`fakeManagerParts: set-based selector "${t}" is not supported`);
    const m = /^(!?)([^!=]+?)(?:(==|=|!=)(.*))?$/.exec(t);
    if (!m) throw new Error(`fakeManagerParts: cannot read selector term "${t}"`);
    const [, not, key, op, value] = m as unknown as [string, string, string, string | undefined, string | undefined];
    return (labels: Record<string, string>): boolean => {
      if (op === undefined) return not ? !(key in labels) : key in labels;
      return op === '!=' ? labels[key] !== value : labels[key] === value;
    };
  });
  return (obj) => terms.every((holds) => holds(obj.metadata?.labels ?? {}));
}
