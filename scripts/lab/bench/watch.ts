/**
 * The bench's own informers (src/runtime/informer), with timestamps taken on receipt.
 */
import type { ResourceType } from '../../../src/kube/resources.js';
import { Informer, kubeListerWatcher } from '../../../src/runtime/informer/index.js';
import type { KubeObject } from '../../../src/runtime/cache/store.js';
import { type BenchEnv } from './env.js';
import { now, sleep, log } from './log.js';

export interface Watched<T extends KubeObject> {
  informer: Informer<T>;
  /** performance.now() of the last add/update/delete delivered. */
  lastEventAt(): number;
  events(): number;
  stop(): Promise<void>;
}

export async function watch<T extends KubeObject>(
  env: BenchEnv,
  type: ResourceType,
  namespace: string,
  handler: { onAdd?(obj: T, at: number): void; onUpdate?(oldObj: T, obj: T, at: number): void; onDelete?(obj: T, at: number): void },
  opts: { fieldSelector?: string; labelSelector?: string } = {},
): Promise<Watched<T>> {
  const informer = new Informer<T>({
    name: `bench/${type.resource}/${namespace}`,
    listerWatcher: kubeListerWatcher<T>(env.rest, type, { namespace, ...opts }),
  });
  let last = now();
  let count = 0;
  informer.addEventHandler({
    onAdd: (o) => {
      last = now();
      count++;
      handler.onAdd?.(o, last);
    },
    onUpdate: (a, b) => {
      last = now();
      count++;
      handler.onUpdate?.(a, b, last);
    },
    onDelete: (o) => {
      last = now();
      count++;
      handler.onDelete?.(o, last);
    },
  });
  const stop = new AbortController();
  const running = informer.run(stop.signal).catch((err) => log(`watch ${type.resource} failed: ${String(err)}`));
  if (!(await informer.waitForSync(AbortSignal.timeout(60_000)))) throw new Error(`watch of ${type.resource} in ${namespace} did not sync`);
  return {
    informer,
    lastEventAt: () => last,
    events: () => count,
    stop: async () => {
      stop.abort();
      await running;
    },
  };
}

/** Resolves once nothing was delivered by any of `watches` for quietMs (or maxMs passed). */
export async function waitQuiet(
  watches: { lastEventAt(): number }[],
  quietMs: number,
  maxMs: number,
  extra?: () => Promise<boolean>,
): Promise<boolean> {
  const deadline = now() + maxMs;
  for (;;) {
    const last = Math.max(...watches.map((w) => w.lastEventAt()));
    if (now() - last >= quietMs && (!extra || (await extra()))) return true;
    if (now() > deadline) return false;
    await sleep(200);
  }
}
