/**
 * Leader crashes under load (issue 7): three replicas with short lease settings, the current
 * leader SIGKILLed every few seconds (and replaced by a fresh replica) while 500 Echos are
 * created. The outcome, not the timing: exactly 500 Jobs, none twice, every status final.
 *
 * On a PRIVATE control plane although the API server is not touched: 500 Jobs (and the job
 * controller's 500 Pods) would keep the shared kube-controller-manager's job and namespace
 * controllers busy for minutes after the test, delaying the Jobs of every other test.
 */
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { V1Job, V1Lease } from '@kubernetes/client-node';
import { isNotFound, resourcePath, type RestClient } from '../../src/kube/index.js';
import type { Echo } from '../../src/api/echo.js';
import { ECHOS } from '../../src/api/echo.js';
import { JOBS } from '../../src/kube/resources.js';
import { jobNameFor } from '../../src/controllers/echo/desired.js';
import { eventually, type KubeList } from '../support/kube.js';
import { haReplicaEnv, startOperator, waitReady, type LeaseTiming, type OperatorProcess } from '../support/operator.js';
import { liveJobsByOwner, logEntries, messageOf, pool, restClient, restItems, privateControlPlanePerFile } from '../support/faults.js';

const controlPlane = privateControlPlanePerFile();

const ECHO_COUNT = 500;
const MIN_KILLS = 5;
const BATCH = 20;
const BATCH_EVERY_MS = 1200;
const LEASE: LeaseTiming = { duration: 4, renew: 3, retry: 1 };

async function holder(rest: RestClient, ns: string): Promise<string> {
  try {
    const lease = await rest.request<V1Lease>('GET', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/echoperator`);
    return lease.spec?.holderIdentity ?? '';
  } catch (err) {
    if (isNotFound(err)) return '';
    throw err;
  }
}

/** How many Jobs ns holds, cheaply (one item and the server's remaining count). */
async function jobCount(rest: RestClient, ns: string): Promise<number> {
  const page = await rest.request<KubeList<V1Job>>('GET', resourcePath(JOBS, ns), { query: { limit: 1 } });
  return page.items.length + (page.metadata?.remainingItemCount ?? 0);
}

/** The collection at `path`, as type T (a list of 500 takes a while). */
async function list<T>(rest: RestClient, path: string): Promise<T[]> {
  return restItems<T>(rest, path, { timeoutMs: 60_000 });
}

test(
  `the leader SIGKILLed every few seconds while ${ECHO_COUNT} Echos are created: exactly ${ECHO_COUNT} Jobs, none twice, every status final`,
  { timeout: 300_000 },
  async (t) => {
    const ns = 'ha-chaos';
    controlPlane().kubectl.ok(['create', 'namespace', ns]);
    const rest = restClient(t, controlPlane().state.kubeconfig);
    const replicas = new Map<string, OperatorProcess>();
    const retired: OperatorProcess[] = [];
    let started = 0;
    const startReplica = async (): Promise<string> => {
      const id = `replica-${started++}`;
      const op = await startOperator(t, {
        KUBECONFIG: controlPlane().state.kubeconfig,
        ...haReplicaEnv(ns, id, LEASE),
        LOG_LEVEL: 'info',
      });
      replicas.set(id, op);
      return id;
    };
    for (let i = 0; i < 3; i++) await startReplica();
    for (const op of replicas.values()) await waitReady(op, 60_000);
    await eventually('a leader', () => holder(rest, ns), 30_000);

    // Created at a steady pace over ~30 s, so that the kills land in the middle of the work.
    const names = Array.from({ length: ECHO_COUNT }, (_, i) => `e${String(i).padStart(3, '0')}`);
    const createdAt = Date.now();
    let creating = true;
    const creation = (async () => {
      for (let i = 0; i < names.length; i += BATCH) {
        const batchStart = Date.now();
        await pool(names.slice(i, i + BATCH), 6, (name) =>
          rest.request('POST', resourcePath(ECHOS, ns), {
            body: { apiVersion: 'mmontes.io/v1alpha1', kind: 'Echo', metadata: { name }, spec: { message: `message of ${name}` } },
          }),
        );
        await sleep(Math.max(0, BATCH_EVERY_MS - (Date.now() - batchStart))); // the workload's pace, not a wait for anything
      }
    })().finally(() => {
      creating = false;
      t.diagnostic(`${ECHO_COUNT} Echos created in ${Date.now() - createdAt} ms`);
    });

    // Chaos: wait for a live leader, let it work a moment, SIGKILL it, start a fresh replica.
    const killed = new Set<string>();
    while (creating || killed.size < MIN_KILLS) {
      const leader = await eventually(
        'a live leader',
        async () => {
          const h = await holder(rest, ns);
          return h && !killed.has(h) && replicas.has(h) && h;
        },
        60_000,
        100,
      );
      await sleep(1500 + Math.random() * 2000); // the fault schedule: a kill at a random point of the leader's work
      const op = replicas.get(leader)!;
      const progress = await jobCount(rest, ns);
      op.proc.kill('SIGKILL');
      t.diagnostic(`SIGKILL ${leader} at ${progress} Jobs`);
      await op.exited;
      killed.add(leader);
      replicas.delete(leader);
      retired.push(op);
      await startReplica();
    }
    await creation;
    t.diagnostic(`${killed.size} leaders killed; chaos over ${Date.now() - createdAt} ms after the first create`);

    const convergeFrom = Date.now();
    let last = '';
    await eventually(
      `${ECHO_COUNT} Echos with one Job each and a final status`,
      async () => {
        const [echos, jobs] = await Promise.all([list<Echo>(rest, resourcePath(ECHOS, ns)), list<V1Job>(rest, resourcePath(JOBS, ns))]);
        const byOwner = liveJobsByOwner(jobs);
        const done = echos.filter((e) => {
          const own = byOwner.get(e.metadata.uid!) ?? [];
          return own.length === 1 && e.status?.jobName === own[0]!.metadata!.name && e.status?.observedGeneration === e.metadata.generation;
        }).length;
        last = `${echos.length} Echos, ${jobs.length} Jobs, ${done} final`;
        return echos.length === ECHO_COUNT && jobs.length === ECHO_COUNT && done === ECHO_COUNT;
      },
      150_000,
      2000,
    ).catch((err) => assert.fail(`${String(err)}; last seen: ${last}`));
    t.diagnostic(`converged ${Date.now() - convergeFrom} ms after the chaos`);

    // Exactly ECHO_COUNT Jobs: one per Echo, the deterministic one for its message, none twice.
    const [echos, jobs] = await Promise.all([list<Echo>(rest, resourcePath(ECHOS, ns)), list<V1Job>(rest, resourcePath(JOBS, ns))]);
    assert.equal(jobs.length, ECHO_COUNT);
    assert.equal(new Set(jobs.map((j) => j.metadata!.name)).size, ECHO_COUNT, 'Job names are unique');
    const byOwner = liveJobsByOwner(jobs);
    for (const echo of echos) {
      const own = byOwner.get(echo.metadata.uid!) ?? [];
      assert.equal(own.length, 1, `${echo.metadata.name} has exactly one Job`);
      assert.equal(own[0]!.metadata!.name, jobNameFor(echo));
      assert.equal(messageOf(own[0]!), echo.spec.message);
      assert.equal(echo.status!.jobName, own[0]!.metadata!.name);
      assert.equal(echo.status!.observedGeneration, echo.metadata.generation);
      assert.ok(echo.status!.phase === 'Pending' || echo.status!.phase === 'Running', `${echo.metadata.name} phase ${echo.status!.phase}`);
    }

    // Across all processes, dead ones included, no Job was created twice (a successor that did not
    // yet see its predecessor's Job gets AlreadyExists and adopts it, which logs no creation).
    const all = [...retired, ...replicas.values()];
    const creations = new Map<string, number>();
    for (const op of all)
      for (const e of await logEntries(op)) if (e.msg === 'job created') creations.set(e.job!, (creations.get(e.job!) ?? 0) + 1);
    const twice = [...creations].filter(([, n]) => n > 1);
    assert.deepEqual(twice, [], 'no Job created twice');
    let leaders = 0;
    for (const op of all) if ((await logEntries(op)).some((e) => e.msg === 'started leading; starting workers')) leaders++;
    assert.ok(leaders >= killed.size, `${leaders} processes led in turn`);
    for (const op of replicas.values()) assert.equal(op.proc.exitCode, null, 'the surviving replicas still run');
  },
);
