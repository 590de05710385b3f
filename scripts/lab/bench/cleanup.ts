/**
 * Everything a benchmark creates is registered here the moment it exists; SIGINT/SIGTERM/SIGHUP
 * kill the operators at once (synchronously) and then send the namespace deletions before
 * exiting; a normal exit kills any operator still running.
 */
import { type ChildProcess } from 'node:child_process';
import { sleep, log } from './log.js';

const children = new Set<ChildProcess>();
const cleanups = new Set<() => unknown>();
let interrupted = false;

/** Registers an operator process, killed on Ctrl-C and at exit; returns its unregister function. */
export function trackChild(child: ChildProcess): () => void {
  children.add(child);
  return () => children.delete(child);
}

export function isInterrupted(): boolean {
  return interrupted;
}

/** Registers an async cleanup (e.g. deleting a namespace); returns its unregister function. */
export function onCleanup(fn: () => unknown): () => void {
  cleanups.add(fn);
  return () => cleanups.delete(fn);
}

function killChildren(signal: NodeJS.Signals = 'SIGKILL'): void {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) {
      try {
        child.kill(signal);
      } catch {
        /* already gone */
      }
    }
  }
}

export async function runCleanups(timeoutMs = 30_000): Promise<void> {
  killChildren();
  const pending = [...cleanups].map((fn) =>
    Promise.resolve()
      .then(fn)
      .catch(() => undefined),
  );
  cleanups.clear();
  await Promise.race([Promise.all(pending), sleep(timeoutMs)]);
}

/**
 * Installed before anything else is created. The control plane lease (if private) installs its
 * own handlers after ours, so ours run first: operators die before the control plane stops.
 */
export function installSignalHandlers(): void {
  for (const s of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) {
    process.on(s, () => {
      if (interrupted) return;
      interrupted = true;
      log(`${s}: killing operators, deleting namespaces, exiting`);
      killChildren();
      void runCleanups(15_000).finally(() => process.exit(s === 'SIGINT' ? 130 : s === 'SIGHUP' ? 129 : 143));
    });
  }
  process.on('exit', () => killChildren());
  // A bug must not leave namespaces behind: clean up, then fail.
  for (const ev of ['unhandledRejection', 'uncaughtException'] as const) {
    process.on(ev, (err: unknown) => {
      if (interrupted) return;
      interrupted = true;
      log(`${ev}: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}; cleaning up`);
      killChildren();
      void runCleanups(15_000).finally(() => process.exit(1));
    });
  }
}
