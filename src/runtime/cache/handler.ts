/**
 * How a cache tells others what changed (client-go's ResourceEventHandler): the one handler type
 * of informers, controllers' event sources and read-your-writes.
 */

export interface EventHandler<T> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

/** Anything that delivers object events: an informer, or several for several namespaces. */
export interface EventSource<T> {
  addEventHandler(handler: EventHandler<T>): void;
}
