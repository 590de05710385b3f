/**
 * What a controller tells the metrics layer. The names follow controller-runtime so existing
 * dashboards work; the mapping is written on each hook. The default does nothing.
 */
export type ReconcileResult = 'success' | 'error' | 'requeue' | 'requeue_after';

export interface ControllerMetrics {
  /** controller_runtime_max_concurrent_reconciles{controller} = workers. */
  setMaxConcurrency(controller: string, workers: number): void;
  /** controller_runtime_active_workers{controller} += delta. */
  activeWorkers(controller: string, delta: 1 | -1): void;
  /**
   * controller_runtime_reconcile_total{controller,result} += 1;
   * controller_runtime_reconcile_errors_total{controller} += 1 when result is 'error';
   * controller_runtime_reconcile_time_seconds{controller} observes seconds.
   */
  reconciled(controller: string, result: ReconcileResult, seconds: number): void;
  /**
   * controller_runtime_terminal_reconcile_errors_total{controller} += 1: a reconcile that ended
   * in a TerminalError (also reported to `reconciled` with result 'error', as controller-runtime
   * counts it).
   */
  terminalError(controller: string): void;
}

export const nopControllerMetrics: ControllerMetrics = {
  setMaxConcurrency() {},
  activeWorkers() {},
  reconciled() {},
  terminalError() {},
};
