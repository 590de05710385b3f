/**
 * The runtime's surface: everything an application may import from the runtime, in one list.
 *
 * The runtime is three folders of src/, none of which names the application: kube/ (the API
 * client: connection, authentication, retries, errors, resource types), runtime/ (informers and
 * caches, the work queue, leader election, controllers and the reconcile kit) and manager/ (runs
 * declared controllers and owns their parts' lifetimes). What this file exports is public; every
 * other export of those folders is internal, free to change with the code that uses it.
 *
 * Contract:
 * - The rest of src/ imports the runtime from this file only: the application (api/, config/,
 *   controllers/), observability/ (which implements the ports listed last: logs, metrics, Events)
 *   and main.ts alike. test/unit/architecture.test.ts refuses any other import of the three
 *   folders from outside them.
 * - Nothing inside the runtime imports this file: it sits above manager/, whose parts it lists,
 *   and no import cycle can run through it.
 * - The surface is closed: every type a public declaration names is exported here too, unless the
 *   member that names it is marked `@internal` (for the runtime's own use); `npm run docs:api`
 *   fails otherwise. Each export states its guarantees on its own declaration, and
 *   `npm run docs:api` renders them (TypeDoc) into dist/api-docs/.
 * - The test kit (a fake client, caches, clock and Event recorder, and a manager's parts made of
 *   them) is a separate entry, runtime/testing/index.ts, so production code never loads a fake.
 * - Loading this file loads the whole runtime, client-node's KubeConfig included (the bundle
 *   holds all of it anyway).
 *
 * @module runtime
 */

// Declaring a controller: the builder, what it declares, the reconciler's contract.
export { ControllerBuilder, controllerFor, sameType } from './controller/builder.js';
export type {
  CacheTransform,
  ControllerCaches,
  ControllerDeclaration,
  ControllerParts,
  ControllerSpec,
  DeclaredCaches,
  ManagerParts,
  OwnedOptions,
  OwnedType,
  PolicyRule,
  PrimaryOptions,
  RunnableController,
  Verb,
  WatchOptions,
  WatchedType,
} from './controller/declaration.js';
export type { ReconcileContext, ReconcileOutcome, Reconciler } from './controller/reconciler.js';
export { generationChangedOrDeleted, generationOrDeletionChanged, type Predicate, type Watched } from './controller/predicates.js';
export { TerminalError, isTerminalError, terminalErrorIn, type TerminalErrorOptions } from './controller/terminal.js';

// The reconcile kit: what every reconciler of a primary object with a status shares.
export { PrimaryReconciler, type Latest, type PrimaryFrame } from './reconcile/primary.js';
export { statusPatch, writeStatus, type StatusWrite } from './reconcile/status.js';
export {
  READY_CONDITION,
  RECONCILING_CONDITION,
  STALLED_CONDITION,
  findCondition,
  readinessConditions,
  setConditions,
  type ConditionInput,
  type Readiness,
} from './reconcile/conditions.js';
export { failureReason, reconcileFailed, reportFailure, type FailureReport, type Reported } from './reconcile/failure.js';
export { NameTakenError, STALLED_RECHECK_MS, stallAt, stallOf, stalledConditions, stalledStatus, type Stall } from './reconcile/stalled.js';
export { applyTo, createByApply, upgradedManagedFields, type GuardedApplyOptions } from './reconcile/apply.js';
export { containsDesired, hasExtraListItems, jsonEqual } from './reconcile/compare.js';
export { apiTime, compact } from './reconcile/time.js';

// The client: writes (and uncached reads) against the API server.
export {
  keyOf,
  type ApplyOptions,
  type CallOptions,
  type Client,
  type DeleteOptions,
  type ListOptions,
  type MergePatch,
  type ObjectKey,
  type PatchOptions,
  type Preconditions,
} from './client/client.js';
export { KubeClient, type RestTransport } from './client/kubeclient.js';

// The cache: what a reconciler reads, filled by the manager's informers.
export type { ObjectCache } from './cache/objectcache.js';
export { CONTROLLER_OWNER_INDEX, NAMESPACE_INDEX, controllerOf, controllerOwnerKey, objectKey, resourceVersionOf } from './cache/store.js';
export { LAST_APPLIED_ANNOTATION, stripForCache } from './informer/informer.js';

// Kubernetes objects and the resource types the runtime reads and writes.
export type { Condition, KubeObject, ObjectMeta, OwnerReference } from '../kube/object.js';
export {
  CONFIGMAPS,
  CRONJOBS,
  DEPLOYMENTS,
  EVENTS,
  JOBS,
  LEASES,
  PODS,
  SECRETS,
  SERVICES,
  apiVersionOf,
  resourcePath,
  withTypeMeta,
  type ResourceType,
} from '../kube/resources.js';

// The API server's refusals, as errors.
export {
  ApiError,
  describeError,
  errorCode,
  isAlreadyExists,
  isConflict,
  isForbidden,
  isGone,
  isNotFound,
  isTooManyRequests,
  isTransient,
  isUnauthorized,
  type StatusBody,
} from '../kube/errors.js';

// Connecting: the kubeconfig, the REST client every part shares, and text safe to log.
export { KubeConfigError, loadKubeConfig } from '../kube/config.js';
export { RestClient, type Query, type RequestOpts, type RestClientOptions } from '../kube/rest.js';
export type { ExecClusterInfo, ExecPluginOptions } from '../kube/execcredential.js';
export type { Reachability } from '../kube/reachability.js';
export { nopRestClientMetrics, type RestClientMetrics } from '../kube/retry.js';
export { redactText } from '../kube/redact.js';

// The manager: runs the declared controllers, their shared caches, probes and leader election.
export {
  DEFAULT_API_UNREACHABLE_TIMEOUT_MS,
  DEFAULT_CACHE_SYNC_TIMEOUT_MS,
  Manager,
  type HealthRegistry,
  type LeaderElectionSettings,
  type ManagerConfig,
  type ManagerDeps,
} from '../manager/manager.js';
export { StartupTimeoutError } from '../manager/startup.js';
export { UnsupportedServerError } from '../manager/preflight.js';

// The work queue, for a loop of the application's own (each controller has one already).
export { WorkQueue, type WorkItem, type WorkQueueOptions } from './workqueue/queue.js';
export { RateLimitingQueue, newRateLimitingQueue, type RateLimitingQueueOptions } from './workqueue/ratelimiting.js';
export { DEFAULT_AGING_MS, DEFAULT_PRIORITY, LOW_PRIORITY, namespaceOf, type FairReadySetOptions } from './workqueue/fair.js';
export {
  BucketRateLimiter,
  ItemExponentialFailureRateLimiter,
  MaxOfRateLimiter,
  defaultControllerRateLimiter,
  type RateLimiter,
} from './workqueue/ratelimiter.js';

// Leader election over a Lease, for work of the application's own (the manager elects already).
export { LeaderElector, LeadershipLostError, type LeaderCallbacks, type LeaderElectorOptions } from './leaderelection/elector.js';
export { KubeLeaseLock, LeaseConflictError, type LeaseLock, type LeaseState, type LeaderRecord } from './leaderelection/lock.js';
export { restLeaseApi, type LeaseApi, type LeaseCall } from '../kube/coordination.js';
export {
  JITTER_FACTOR,
  LEASE_DEFAULT_SECONDS,
  LEASE_MAX_SECONDS,
  brokenLeaseRule,
  leaderElectionDefaults,
  validateLeaderElectionConfig,
  type LeaderElectionConfig,
  type LeaderElectionConfigInput,
  type LeaseTiming,
} from './leaderelection/config.js';

// The ports the runtime reports through: logs, time, Events and metrics (observability/ implements them).
export { nopLogger, type LogFields, type LogLevel, type Logger } from './log.js';
export { LONGEST_TIMER_MS, realClock, sleepWith, type Clock, type Timer } from './clock.js';
export { nopEventRecorder, type EventRecorder, type EventSubject, type EventType } from './events.js';
export { nopControllerMetrics, type ControllerMetrics, type ReconcileResult } from './controller/metrics.js';
export { noopWorkQueueMetrics, type InFlightWork, type WorkQueueMetrics, type WorkQueueMetricsProvider } from './workqueue/metrics.js';
export { nopLeaderElectionMetrics, type LeaderElectionMetrics } from './leaderelection/elector.js';
export { WATCH_ERROR_REASONS, nopInformerMetrics, type InformerMetrics, type WatchErrorReason } from './informer/reflector.js';
export { MALFORMED_REASONS, type MalformedReason } from './informer/malformed.js';
