/**
 * A KIP-848 consumer group through the loss of its coordinator (issue 24): three brokers on real
 * ZooKeeper, `__consumer_offsets` with replication factor 3, three members of the consumer
 * protocol (two on @platformatic/kafka, `groupProtocol: 'consumer'`, one on Fjord's own client,
 * `group.protocol=consumer`) sharing a topic of six partitions while a producer runs. The
 * broker FindCoordinator names for the group is killed -9; the new leader of the group's offsets
 * partition loads the group from its ConsumerGroup* records, and the members go on with the
 * member ids, epochs and partitions they had: no partition moves because of the failover (each
 * member's assignment, as the client sees it, is the same from before the kill to the end), every
 * acknowledged record is consumed, and the committed offsets never go backwards (the
 * @platformatic/kafka members commit as test/helpers/platformatic-commits.ts does, Fjord's with
 * auto-commit). The @platformatic/kafka members get test/helpers/platformatic-coordinator.ts's
 * work-around of a client gap that can leave one unable ever to reach the new coordinator.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { isDeepStrictEqual } from 'node:util';
import '../helpers/promise-with-resolvers.js';
import { Admin, Consumer, Producer, stringDeserializers, stringSerializers } from '@platformatic/kafka';
import { Cluster } from '../helpers/cluster.js';
import { kip848BrokerProps } from '../helpers/kip848-props.js';
import { requirePeer } from '../helpers/peers.js';
import { forwardCommits } from '../helpers/platformatic-commits.js';
import { rediscoverCoordinatorOfUnlistedBroker } from '../helpers/platformatic-coordinator.js';
import { kafkaTopics, offsetsPartitionFor, waitForTopic, zkTopic } from '../cluster/cluster-clients.js';
import { Connection } from '../../src/client/connection.js';
import { Consumer as FjordConsumer } from '../../src/client/index.js';
import { Api, type ApiDef } from '../../src/client/apis.js';
import {
  ConsumerGroupDescribeRequestCodec,
  ConsumerGroupDescribeResponseCodec,
  type ConsumerGroupDescribeRequest,
  type ConsumerGroupDescribeResponse,
} from '../../src/protocol/messages/index.js';
import { ErrorCode, errorName } from '../../src/protocol/errors.js';

const TOPIC = 'kip848-failover';
const GROUP = 'kip848-failover-group';
const OFFSETS_PARTITIONS = 10; // test/helpers/cluster.ts sets offsets.topic.num.partitions=10
// The clients retry through the seconds the cluster needs to move leaders (the dead broker's
// ZooKeeper session, 6 s, must expire first); their default (3 retries, 1 s apart) would give up.
const RETRIES = { retries: 60, retryDelay: 250 };

let c: Cluster | undefined;
before(async () => {
  if (Cluster.available())
    c = await Cluster.start({
      props: { 'offsets.topic.replication.factor': '3', ...kip848BrokerProps({ heartbeatMs: 500 }) },
    });
});
after(() => c?.stop());

interface Member {
  /** Also its client id. */
  name: string;
  values: Set<string>;
  /** Why its stream ended, if it did before close(). */
  failure?: unknown;
  /** Its partitions of TOPIC as its client sees them, e.g. "0,3" ('' when it holds none). */
  assignment(): string;
  memberId(): string | null | undefined;
  /** When a heartbeat of it was last answered (0: never), and by which broker's port where the test can see it. */
  lastHeartbeat(): { at: number; port: number | null };
  /** Its heartbeats' failures so far (how many, the last one's time and cause), for a timeout's message. */
  heartbeatErrors(): HeartbeatErrors;
  close(): Promise<void>;
}

interface HeartbeatErrors {
  count: number;
  lastAt: number;
  last: string;
}

/** Records a heartbeat failure: what a member that stops heartbeating last ran into. */
function noteHeartbeatError(errors: HeartbeatErrors, cause: string): void {
  errors.count++;
  errors.lastAt = Date.now();
  errors.last = cause;
}

/** An error of @platformatic/kafka and, after it, the innermost cause it wraps (MultipleErrors of retries). */
function causesOf(err: unknown): string {
  const messageOf = (e: unknown) => (e instanceof Error ? e.message : String(e));
  const lastWrapped = (e: unknown) => (e instanceof Error ? (e as { errors?: unknown[] }).errors?.at(-1) : undefined);
  let inner = err;
  for (let next = lastWrapped(inner); next !== undefined; next = lastWrapped(inner)) inner = next;
  return inner === err ? messageOf(err) : `${messageOf(err)} <- ${messageOf(inner)}`;
}

function partitionsOf(assignments: readonly { topic: string; partitions: readonly number[] }[]): string {
  const ps = assignments.filter((a) => a.topic === TOPIC).flatMap((a) => a.partitions);
  return [...ps].sort((a, b) => a - b).join(',');
}

async function startPlatformaticMember(bootstrap: string[], name: string): Promise<Member> {
  const consumer = new Consumer({
    groupId: GROUP,
    clientId: name,
    bootstrapBrokers: bootstrap,
    deserializers: stringDeserializers,
    maxWaitTime: 100,
    groupProtocol: 'consumer',
    ...RETRIES,
  });
  rediscoverCoordinatorOfUnlistedBroker(consumer);
  const errors: HeartbeatErrors = { count: 0, lastAt: 0, last: '' };
  consumer.on('consumer:heartbeat:error', (e: { error: unknown }) => noteHeartbeatError(errors, causesOf(e.error)));
  const member: Member = {
    name,
    values: new Set(),
    assignment: () => partitionsOf(consumer.assignments ?? []),
    memberId: () => consumer.memberId,
    lastHeartbeat: () => ({ at: consumer.lastHeartbeat?.getTime() ?? 0, port: null }),
    heartbeatErrors: () => errors,
    close: async () => {},
  };
  const commits = forwardCommits(consumer, TOPIC);
  const stream = await consumer.consume({ topics: [TOPIC], mode: 'committed', fallbackMode: 'earliest', autocommit: false });
  let closing = false;
  const loop = (async () => {
    for await (const m of stream) {
      // A record of a partition no longer held here is left to its new owner (see kip848-platformatic).
      if (!commits.owns(m.partition)) continue;
      member.values.add(m.value);
      // A commit refused while the coordinator moves is dropped: the next one covers the record.
      commits.commit(m);
    }
    if (!closing) member.failure = new Error(`${name}'s stream ended`);
  })().catch((err: unknown) => {
    if (!closing) member.failure = err;
  });
  member.close = async () => {
    closing = true;
    await stream.close().catch(() => undefined);
    await consumer.close(true).catch(() => undefined);
    await loop;
  };
  return member;
}

/**
 * A member on Fjord's own client (group.protocol=consumer), auto-committing. Its heartbeats are
 * watched on its own connections (the client keeps no last-heartbeat time): each answer without
 * error, with the port of the broker that gave it.
 */
function startFjordMember(bootstrap: string[], name: string): Member {
  const consumer = new FjordConsumer({
    bootstrapServers: bootstrap,
    clientId: name,
    groupId: GROUP,
    groupProtocol: 'consumer',
    autoOffsetReset: 'earliest',
    autoCommitIntervalMs: 200,
    fetchMaxWaitMs: 100,
  });
  let heartbeat = { at: 0, port: null as number | null, memberId: undefined as string | undefined };
  const errors: HeartbeatErrors = { count: 0, lastAt: 0, last: '' };
  const cluster = consumer.cluster;
  const connectionTo = cluster.connectionTo.bind(cluster);
  const watched = new WeakSet<Connection>();
  cluster.connectionTo = async (host: string, port: number) => {
    const conn = await connectionTo(host, port);
    if (watched.has(conn)) return conn;
    watched.add(conn);
    const send = conn.send.bind(conn) as (api: ApiDef<unknown, unknown>, request: unknown, opts?: object) => Promise<unknown>;
    conn.send = ((api: ApiDef<unknown, unknown>, request: unknown, opts?: object) => {
      const answer = send(api, request, opts);
      if (api.apiKey === Api.ConsumerGroupHeartbeat.apiKey) {
        answer.then(
          (r) => {
            const resp = r as { errorCode: number; memberId: string | null; memberEpoch: number };
            if (resp.errorCode === ErrorCode.NONE && resp.memberEpoch > 0)
              heartbeat = { at: Date.now(), port: conn.port, memberId: resp.memberId ?? undefined };
            else if (resp.errorCode !== ErrorCode.NONE) noteHeartbeatError(errors, `${errorName(resp.errorCode)} from port ${conn.port}`);
          },
          (err: unknown) => noteHeartbeatError(errors, `${String(err)} (port ${conn.port})`),
        );
      }
      return answer;
    }) as typeof conn.send;
    return conn;
  };
  let closing = false;
  const member: Member = {
    name,
    values: new Set(),
    assignment: () => partitionsOf(consumer.assignment().map((tp) => ({ topic: tp.topic, partitions: [tp.partition] }))),
    memberId: () => heartbeat.memberId,
    lastHeartbeat: () => ({ at: heartbeat.at, port: heartbeat.port }),
    heartbeatErrors: () => errors,
    close: async () => {
      closing = true;
      await consumer.close(); // first: a poll waiting on the group or on a coordinator ends with it
      await loop;
    },
  };
  consumer.subscribe([TOPIC]);
  const loop = (async () => {
    while (!closing) for (const r of await consumer.poll(100)) member.values.add(r.value!.toString());
  })().catch((err: unknown) => {
    if (!closing) member.failure = err;
  });
  return member;
}

async function findCoordinator(port: number): Promise<{ errorCode: number; nodeId: number }> {
  const conn = await Connection.connect('127.0.0.1', port, { clientId: 'kip848-failover', connectTimeoutMs: 10_000, requestTimeoutMs: 30_000 });
  try {
    const r = await conn.send(Api.FindCoordinator, { key: GROUP, keyType: 0 }, { version: 2 });
    return { errorCode: r.errorCode, nodeId: r.nodeId };
  } finally {
    conn.close();
  }
}

/** Fjord's client does not speak ConsumerGroupDescribe (69); the test does, with the generated codec. */
const ConsumerGroupDescribe: ApiDef<ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse> = {
  apiKey: 69,
  name: 'ConsumerGroupDescribe',
  request: ConsumerGroupDescribeRequestCodec,
  response: ConsumerGroupDescribeResponseCodec,
  clientMax: 0,
};

/** The group as the coordinator on `port` describes it: epochs, and per client id its member id, epoch and partitions. */
async function describeGroup(port: number): Promise<{ errorCode: number; groupEpoch: number; assignmentEpoch: number; members: Record<string, string> }> {
  const conn = await Connection.connect('127.0.0.1', port, { clientId: 'kip848-failover', connectTimeoutMs: 10_000, requestTimeoutMs: 30_000 });
  try {
    const r = await conn.send(ConsumerGroupDescribe, { groupIds: [GROUP], includeAuthorizedOperations: false }, { version: 0 });
    const g = r.groups[0]!;
    const members: Record<string, string> = {};
    for (const m of g.members) {
      const ps = m.assignment.topicPartitions.flatMap((tp) => tp.partitions).sort((a, b) => a - b);
      members[m.clientId] = `${m.memberId} epoch ${m.memberEpoch} [${ps.join(',')}]`;
    }
    return { errorCode: g.errorCode, groupEpoch: g.groupEpoch, assignmentEpoch: g.assignmentEpoch, members };
  } finally {
    conn.close();
  }
}

test('KIP-848 members keep their partitions through kill -9 of the group coordinator; nothing skipped, commits only forward', {
  timeout: 120_000,
}, async (t) => {
  if (!requirePeer(t, 'zookeeper')) return;
  const cluster = c!;
  await cluster.waitForRegistered([0, 1, 2]);
  // The coordinator first (FindCoordinator creates __consumer_offsets): the topic's partitions are
  // led by the two other brokers, so that the kill moves only the coordinator. (@platformatic/kafka
  // 2.12 gives up fetching when a refreshed metadata names a leader that is not among its brokers,
  // as it does for the seconds before the dead broker's partitions get new leaders.)
  const coordinator = await cluster.waitFor('FindCoordinator to name a coordinator', 30_000, async () => {
    const r = await findCoordinator(cluster.broker(0).port);
    return r.errorCode === ErrorCode.NONE ? r.nodeId : undefined;
  });
  const offsetsPartition = offsetsPartitionFor(GROUP, OFFSETS_PARTITIONS);
  const offsets = await waitForTopic(cluster, '__consumer_offsets');
  assert.equal(offsets.partitions[offsetsPartition]!.leader, coordinator, "the coordinator leads the group's offsets partition");
  assert.equal(offsets.partitions[offsetsPartition]!.replicas.length, 3, 'offsets.topic.replication.factor=3');
  const [x, y] = [0, 1, 2].filter((id) => id !== coordinator) as [number, number];
  const replicas = Array.from({ length: 6 }, (_, p) => (p % 2 === 0 ? [x, y, coordinator] : [y, x, coordinator]).join(':')).join(',');
  const created = await kafkaTopics('--create', '--topic', TOPIC, '--bootstrap-server', cluster.bootstrap(), '--replica-assignment', replicas);
  assert.equal(created.code, 0, created.stderr);
  await waitForTopic(cluster, TOPIC);
  const bootstrap = cluster.brokers.map((b) => b.bootstrap);

  const producer = new Producer({ clientId: 'kip848-failover-producer', bootstrapBrokers: bootstrap, serializers: stringSerializers, acks: 1, ...RETRIES });
  const admin = new Admin({ clientId: 'kip848-failover-admin', bootstrapBrokers: bootstrap, ...RETRIES });
  const members: Member[] = [];
  const violations: string[] = [];
  const acked: string[] = [];
  let producing = true;
  let next = 0;
  let produceError: unknown;
  const producing$ = (async () => {
    while (producing) {
      const batch = Array.from({ length: 10 }, () => `v-${next++}`);
      try {
        await producer.send({ messages: batch.map((value, i) => ({ topic: TOPIC, key: `k-${i}`, value })) });
        acked.push(...batch);
      } catch (err) {
        produceError = err; // not acknowledged: not required to be consumed
      }
      await new Promise((r) => setTimeout(r, 20)); // a steady trickle, not a flood
    }
  })();
  // Committed offsets, polled all along (skipped while no coordinator answers).
  const lastCommitted = new Map<number, bigint>();
  let watching = true;
  // Set while the members' partitions are compared with those before the kill (stopped in the
  // finally too: a failed run must not leave the loop, and the test file, running).
  let comparing = false;
  const watcher = (async () => {
    while (watching) {
      try {
        const [g] = await admin.listConsumerGroupOffsets({ groups: [GROUP] });
        for (const tp of g?.topics ?? []) {
          for (const p of tp.partitions) {
            const before = lastCommitted.get(p.partitionIndex);
            if (before !== undefined && p.committedOffset >= 0n && p.committedOffset < before)
              violations.push(`partition ${p.partitionIndex}: committed offset went back ${before} -> ${p.committedOffset}`);
            if (p.committedOffset >= 0n) lastCommitted.set(p.partitionIndex, p.committedOffset);
          }
        }
      } catch {
        // the coordinator is moving
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  })();
  let lastDescribed: unknown;
  const consumed = () => {
    const all = new Set<string>();
    for (const m of members) for (const v of m.values) all.add(v);
    return all;
  };
  const explain = () =>
    JSON.stringify({
      acked: acked.length,
      consumed: consumed().size,
      members: members.map((m) => [m.name, m.assignment(), m.memberId(), m.lastHeartbeat(), m.heartbeatErrors(), String(m.failure ?? '')]),
      lastDescribed,
    });
  /** cluster.waitFor with the clients' state at the timeout added. */
  const waitFor = async <T>(what: string, ms: number, probe: () => Promise<T | undefined | false> | T | undefined | false): Promise<T> => {
    try {
      return await cluster.waitFor(what, ms, probe);
    } catch (err) {
      throw new Error(`${(err as Error).message}\nclients: ${explain()}`);
    }
  };
  const healthy = () => {
    for (const m of members) if (m.failure !== undefined) throw new Error(`member ${m.name} stopped: ${String(m.failure)}`);
  };
  try {
    for (const name of ['m0', 'm1']) members.push(await startPlatformaticMember(bootstrap, name));
    members.push(startFjordMember(bootstrap, 'fjord'));
    // Settled: the members share the six partitions as the coordinator holds them, each at the
    // group's epoch; the new coordinator must then have the same (from the records). Both sides at
    // once: while a partition moves, the union of what the clients hold is already whole (its old
    // owner still holds it while the new one holds the rest), and the clients may see their
    // partitions a heartbeat before the coordinator has every member at the group's epoch.
    const { before, described } = await waitFor(
      'the three members sharing the six partitions, as the coordinator holds them at the group epoch',
      60_000,
      async () => {
        healthy();
        const owned = members.map((m) => m.assignment());
        const all = owned.flatMap((s) => (s === '' ? [] : s.split(',')));
        if (!owned.every((s) => s !== '') || all.length !== 6 || new Set(all).size !== 6 || consumed().size < 100) return undefined;
        const d = await describeGroup(cluster.broker(coordinator).port);
        lastDescribed = d;
        const want = Object.fromEntries(members.map((m, i) => [m.name, `${m.memberId()} epoch ${d.groupEpoch} [${owned[i]}]`]));
        const settled = d.errorCode === ErrorCode.NONE && d.assignmentEpoch === d.groupEpoch && isDeepStrictEqual(d.members, want);
        return settled ? { before: owned, described: d } : undefined;
      },
    );
    t.diagnostic(`assignments before the failover: ${JSON.stringify(before)}`);

    for (const b of cluster.brokers)
      assert.deepEqual(await findCoordinator(b.port), { errorCode: ErrorCode.NONE, nodeId: coordinator }, `FindCoordinator on broker ${b.id}`);
    await cluster.waitFor(
      `__consumer_offsets-${offsetsPartition}'s ISR whole`,
      30_000,
      async () => (await zkTopic(cluster, '__consumer_offsets'))?.partitions[offsetsPartition]?.isr.length === 3,
    );

    // From here on, no member's partitions may change.
    comparing = true;
    const comparer = (async () => {
      while (comparing) {
        members.forEach((m, i) => {
          const now = m.assignment();
          if (now !== before[i]) violations.push(`${m.name}'s partitions went from [${before[i]}] to [${now}]`);
        });
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const killedAt = Date.now();
    await cluster.broker(coordinator).kill();
    const live = cluster.brokers.filter((b) => b.id !== coordinator);
    const moved = await cluster.waitFor('a new coordinator', 30_000, async () => {
      const r = await findCoordinator(live[0]!.port);
      return r.errorCode === ErrorCode.NONE && r.nodeId !== coordinator ? r.nodeId : undefined;
    });
    const movedAt = Date.now();
    // Every member heartbeats successfully to the new coordinator (its session goes on there).
    await waitFor(`every member heartbeating to broker ${moved}`, 30_000, () => {
      healthy();
      return members.every((m) => {
        const h = m.lastHeartbeat();
        return h.at > movedAt && (h.port === null || h.port === cluster.broker(moved).port);
      });
    });
    assert.deepEqual(
      await describeGroup(cluster.broker(moved).port),
      described,
      `broker ${moved} resumed the group as it was: same member ids, epochs, partitions`,
    );
    t.diagnostic(
      `coordinator ${coordinator} killed; ${moved} took over after ${movedAt - killedAt} ms; members heartbeating there after ${Date.now() - killedAt} ms`,
    );
    const consumedAtMove = acked.length;
    await waitFor('the records produced after the failover consumed', 30_000, () => {
      healthy();
      const all = consumed();
      return acked.length > consumedAtMove + 50 && acked.slice(0, consumedAtMove + 50).every((v) => all.has(v));
    });
    producing = false;
    await producing$;
    await waitFor('every acknowledged record consumed', 30_000, () => {
      healthy();
      const all = consumed();
      return acked.every((v) => all.has(v));
    });
    comparing = false;
    await comparer;
    assert.deepEqual(
      members.map((m) => m.assignment()),
      before,
      'each member holds the partitions it held before the failover',
    );
    t.diagnostic(`${acked.length} records acknowledged and consumed (last produce error during the failover: ${String(produceError ?? 'none')})`);
  } finally {
    producing = false;
    watching = false;
    comparing = false;
    // Bounded: a client stuck retrying must not hold the test file open past its end.
    const bounded = (p: Promise<unknown>) => Promise.race([p.catch(() => undefined), new Promise((r) => setTimeout(r, 5000).unref())]);
    await Promise.all([bounded(producing$), bounded(watcher), ...members.map((m) => bounded(m.close())), bounded(producer.close()), bounded(admin.close())]);
  }
  assert.deepEqual(violations.slice(0, 10), []);
});
