/**
 * The resource-lock seam of leader election: read the leader record, create it, or replace it
 * under optimistic concurrency. Everything that knows about the Kubernetes API lives here, so the
 * elector is tested against an in-memory lock and the Lease mapping is reviewed in one place.
 *
 * Guarantee the elector builds on: update() succeeds only if the lease is still at the
 * resourceVersion the caller read, so two candidates racing for the same lease cannot both win.
 */
import { V1MicroTime, type V1Lease, type V1LeaseSpec } from '@kubernetes/client-node';
import type { LeaseApi, LeaseCall } from '../../kube/coordination.js';

/**
 * RFC 3339 with exactly six fractional digits, as the API server's MicroTime demands; it rejects
 * the millisecond form Date.toISOString() produces.
 */
export type MicroTime = string;

export function toMicroTime(date: Date): MicroTime {
  return date.toISOString().replace(/Z$/, '000Z');
}

/** The leader election fields of a Lease spec (client-go's LeaderElectionRecord). */
export interface LeaderRecord {
  /** '' when no one holds the lease (never held, or released on purpose). */
  holderIdentity: string;
  /** The holder's promise: it stops leading within this long of its last write. */
  leaseDurationSeconds: number;
  acquireTime?: MicroTime;
  renewTime?: MicroTime;
  /** Number of times the lease changed hands. */
  leaderTransitions: number;
}

/** A record as stored, with the version an update must name. */
export interface LeaseState {
  record: LeaderRecord;
  resourceVersion: string;
}

/** The write lost an optimistic-concurrency race: someone else wrote (or created) the lease first. */
export class LeaseConflictError extends Error {
  override readonly name = 'LeaseConflictError';
}

/**
 * Every call rejects once `call.signal` aborts (the elector bounds a leader's renewal with it), and
 * runs `call.onSend`, if given, just before each attempt is sent: a write that succeeds took effect
 * after its last onSend (the elector dates its hold from that instant).
 */
export interface LeaseLock {
  /** The current record, or undefined when the lease does not exist. */
  get(call?: LeaseCall): Promise<LeaseState | undefined>;
  /** Creates the lease; throws LeaseConflictError when it already exists. */
  create(record: LeaderRecord, call?: LeaseCall): Promise<LeaseState>;
  /** Replaces the record if the lease is still at resourceVersion; throws LeaseConflictError if not. */
  update(record: LeaderRecord, resourceVersion: string, call?: LeaseCall): Promise<LeaseState>;
}

/**
 * A LeaseLock on a coordination.k8s.io/v1 Lease. Each call must be bounded by the api (see
 * restLeaseApi): a hung connection would otherwise stall the elector (a leader is still stopped
 * by its renew deadline, but a standby would never retry).
 */
export class KubeLeaseLock implements LeaseLock {
  /**
   * The Lease as last read or written. update() starts from it so labels, annotations, owner
   * references and spec fields this code does not manage survive the replace.
   */
  private last: V1Lease | undefined;

  constructor(
    private readonly api: LeaseApi,
    readonly namespace: string,
    readonly name: string,
  ) {}

  async get(call: LeaseCall = {}): Promise<LeaseState | undefined> {
    try {
      const lease = await this.api.readNamespacedLease({ name: this.name, namespace: this.namespace, ...call });
      return this.remember(lease);
    } catch (err) {
      if (statusCode(err) === 404) {
        this.last = undefined;
        return undefined;
      }
      throw err;
    }
  }

  async create(record: LeaderRecord, call: LeaseCall = {}): Promise<LeaseState> {
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: this.name, namespace: this.namespace },
      spec: toLeaseSpec(record),
    };
    try {
      return this.remember(await this.api.createNamespacedLease({ namespace: this.namespace, body, ...call }));
    } catch (err) {
      throw conflictOr(err, `lease ${this.namespace}/${this.name} already exists`);
    }
  }

  async update(record: LeaderRecord, resourceVersion: string, call: LeaseCall = {}): Promise<LeaseState> {
    // Only reuse the cached object if it is the version being replaced; otherwise its metadata
    // could be stale, and the server rejects the write on the version anyway.
    const base = this.last?.metadata?.resourceVersion === resourceVersion ? this.last : undefined;
    const body: V1Lease = {
      ...base,
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { ...(base?.metadata ?? { name: this.name, namespace: this.namespace }), resourceVersion },
      spec: { ...base?.spec, ...toLeaseSpec(record) },
    };
    try {
      const lease = await this.api.replaceNamespacedLease({ name: this.name, namespace: this.namespace, body, ...call });
      return this.remember(lease);
    } catch (err) {
      throw conflictOr(err, `lease ${this.namespace}/${this.name} changed since resourceVersion ${resourceVersion}`);
    }
  }

  private remember(lease: V1Lease): LeaseState {
    this.last = lease;
    return { record: fromLeaseSpec(lease.spec), resourceVersion: lease.metadata?.resourceVersion ?? '' };
  }
}

/** The HTTP status of a failed call (ApiError and client-node's ApiException both carry it as code). */
function statusCode(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

function conflictOr(err: unknown, message: string): unknown {
  return statusCode(err) === 409 ? new LeaseConflictError(message, { cause: err }) : err;
}

function toLeaseSpec(record: LeaderRecord): V1LeaseSpec {
  return {
    holderIdentity: record.holderIdentity,
    leaseDurationSeconds: record.leaseDurationSeconds,
    acquireTime: microTimeValue(record.acquireTime),
    renewTime: microTimeValue(record.renewTime),
    leaseTransitions: record.leaderTransitions,
  };
}

function fromLeaseSpec(spec: V1LeaseSpec | undefined): LeaderRecord {
  return {
    holderIdentity: spec?.holderIdentity ?? '',
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    acquireTime: microTimeString(spec?.acquireTime),
    renewTime: microTimeString(spec?.renewTime),
    leaderTransitions: spec?.leaseTransitions ?? 0,
  };
}

/** V1MicroTime serializes with six fractional digits; a plain Date would be rejected. */
function microTimeValue(time: MicroTime | undefined): V1MicroTime | undefined {
  if (time === undefined) return undefined;
  const ms = Date.parse(time);
  return Number.isNaN(ms) ? undefined : new V1MicroTime(ms);
}

/**
 * The client's deserializer has no entry for MicroTime and hands back the wire string despite the
 * declared type; accept a Date too in case a later version starts parsing it.
 */
function microTimeString(time: unknown): MicroTime | undefined {
  if (typeof time === 'string') return time;
  if (time instanceof Date && !Number.isNaN(time.getTime())) return toMicroTime(time);
  return undefined;
}
