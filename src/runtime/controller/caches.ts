/**
 * A declaration's caches found by type, as its reconciler asks for them (ControllerCaches through
 * DeclaredCaches): the manager's shared caches, or a test's fakes (testing/parts.ts). Asking for a
 * kind the declaration does not reconcile, own or watch in that role throws, naming the controller.
 */
import type { ResourceType } from '../../kube/resources.js';
import type { ObjectCache } from '../cache/objectcache.js';
import type { KubeObject } from '../cache/store.js';
import { sameType } from './builder.js';
import type { DeclaredCaches } from './declaration.js';

/** One declared kind's cache. */
export interface TypedCache {
  type: ResourceType;
  cache: ObjectCache<KubeObject>;
}

export function declaredCaches(
  controller: string,
  caches: { primary: TypedCache; owned: readonly TypedCache[]; watched: readonly TypedCache[] },
): DeclaredCaches {
  const lookup = (role: string, declared: readonly TypedCache[]) => {
    return <T extends KubeObject>(type: ResourceType<T>): ObjectCache<T> => {
      const found = declared.find((d) => sameType(d.type, type));
      if (!found) throw new Error(`controller ${controller} reads ${type.kind}, which it does not ${role}`);
      // The declaration paired this cache with `type`: its objects are T.
      return found.cache as ObjectCache<T>;
    };
  };
  return { primary: lookup('reconcile', [caches.primary]), owned: lookup('own', caches.owned), watched: lookup('watch', caches.watched) };
}
