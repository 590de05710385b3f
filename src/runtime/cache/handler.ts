/**
 * How a cache tells others what changed (client-go's ResourceEventHandler): the one handler type
 * of informers, controllers' event sources and read-your-writes.
 */

export interface EventHandler<T> {
  /**
   * isInInitialList (client-go's): the object was delivered as part of what the cache already held
   * when the handler started (the first LIST, or the cache's contents for a handler added later),
   * not as news of a create. Controllers give such keys a low priority.
   */
  onAdd?(obj: T, isInInitialList?: boolean): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

/** Anything that delivers object events: an informer, or several for several namespaces. */
export interface EventSource<T> {
  addEventHandler(handler: EventHandler<T>): void;
}
