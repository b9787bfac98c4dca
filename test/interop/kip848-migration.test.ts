/**
 * Online migration between the classic and consumer protocols (KIP-848) with real clients on
 * one broker: a classic group of three kafkajs members (protocol type consumer) on a
 * six-partition topic, a producer running all along, is upgraded one member at a time to
 * members speaking the consumer protocol: @platformatic/kafka (`groupProtocol: 'consumer'`; the
 * first one converts the group), then Fjord's own client (`group.protocol=consumer`, joining
 * the mixed group), then @platformatic/kafka again. It is then taken back to kafkajs one member
 * at a time, the Fjord member last (its leave turns the group classic again). No produced record is
 * skipped, no partition is owned by two members at once (each member reports its assignment
 * changes as they happen; the coordinator's view is checked all along too) and committed
 * offsets never go backwards (the @platformatic/kafka members commit as
 * test/helpers/platformatic-commits.ts does, the others with auto-commit).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import '../helpers/promise-with-resolvers.js';
import { Consumer, stringDeserializers } from '@platformatic/kafka';
import { Kafka, logLevel } from 'kafkajs';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { kip848BrokerProps } from '../helpers/kip848-props.js';
import { forwardCommits } from '../helpers/platformatic-commits.js';
import { Consumer as FjordConsumer } from '../../src/client/index.js';
import { waitFor } from '../helpers/wait-for.js';

const TOPIC = 'migration-events';
const GROUP = 'migration-group';

interface Member {
  readonly name: string;
  readonly values: Set<string>;
  /** Polled for members whose client has no assignment events. */
  poll?(): number[] | null;
  close(): Promise<void>;
}

/** Each member's partitions as it reports them, and every moment two members owned one. */
class Ownership {
  readonly owned = new Map<string, number[]>();
  readonly violations: string[] = [];
  report(member: string, partitions: number[]): void {
    this.owned.set(
      member,
      [...partitions].sort((a, b) => a - b),
    );
    for (const [other, ps] of this.owned) {
      if (other === member) continue;
      for (const p of partitions) if (ps.includes(p)) this.violations.push(`${Date.now()}: ${member} and ${other} both own partition ${p}`);
    }
  }
  all(): number[] {
    return [...this.owned.values()].flat().sort((a, b) => a - b);
  }
}

async function kafkajsMember(b: TestBroker, name: string, own: Ownership): Promise<Member> {
  const kafka = new Kafka({ clientId: name, brokers: [b.bootstrap], logLevel: logLevel.NOTHING });
  const consumer = kafka.consumer({ groupId: GROUP, sessionTimeout: 10_000, rebalanceTimeout: 20_000, heartbeatInterval: 300, maxWaitTimeInMs: 100 });
  const values = new Set<string>();
  consumer.on(consumer.events.REBALANCING, () => own.report(name, []));
  consumer.on(consumer.events.GROUP_JOIN, (e) => own.report(name, e.payload.memberAssignment[TOPIC] ?? []));
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      values.add(message.value!.toString());
    },
  });
  return {
    name,
    values,
    async close() {
      await consumer.disconnect(); // LeaveGroup
      own.report(name, []);
    },
  };
}

async function platformaticMember(b: TestBroker, name: string, own: Ownership): Promise<Member> {
  const consumer = new Consumer({
    groupId: GROUP,
    clientId: name,
    bootstrapBrokers: [b.bootstrap],
    deserializers: stringDeserializers,
    maxWaitTime: 100,
    groupProtocol: 'consumer',
  });
  const values = new Set<string>();
  const mine = () => consumer.assignments?.find((a) => a.topic === TOPIC)?.partitions ?? [];
  const commits = forwardCommits(consumer, TOPIC);
  const stream = await consumer.consume({ topics: [TOPIC], mode: 'committed', fallbackMode: 'earliest', autocommit: false });
  const loop = (async () => {
    for await (const m of stream) {
      // Records of a partition revoked meanwhile are left to its new owner (as Java's consumer).
      if (!commits.owns(m.partition)) continue;
      values.add(m.value);
      commits.commit(m); // one racing an epoch change is dropped: the record is consumed again, never lost
    }
  })().catch(() => undefined);
  return {
    name,
    values,
    poll: () => (consumer.assignments === null ? null : mine()),
    async close() {
      await stream.close();
      await consumer.close(true); // leaves (epoch -1)
      own.report(name, []);
      await loop;
    },
  };
}

/** A member on Fjord's own client (group.protocol=consumer), auto-committing; its rebalance listener reports what it owns. */
function fjordMember(b: TestBroker, name: string, own: Ownership): Member {
  const consumer = new FjordConsumer({
    bootstrapServers: b.bootstrap,
    clientId: name,
    groupId: GROUP,
    groupProtocol: 'consumer',
    autoOffsetReset: 'earliest',
    autoCommitIntervalMs: 200,
    fetchMaxWaitMs: 100,
    maxPollIntervalMs: 20_000, // the kafkajs members' rebalance timeout
  });
  const values = new Set<string>();
  // Called after a revocation's commit, before the heartbeat that tells the coordinator it is done.
  const report = () =>
    own.report(
      name,
      consumer
        .assignment()
        .filter((tp) => tp.topic === TOPIC)
        .map((tp) => tp.partition),
    );
  consumer.subscribe([TOPIC], { onPartitionsRevoked: report, onPartitionsAssigned: report });
  let closing = false;
  let failure: unknown;
  const loop = (async () => {
    while (!closing) for (const r of await consumer.poll(100)) values.add(r.value!.toString());
  })().catch((err: unknown) => {
    if (!closing) failure = err;
  });
  return {
    name,
    values,
    async close() {
      closing = true;
      own.report(name, []); // before its leave: only then does the coordinator give its partitions away
      await consumer.close(); // commits its positions and leaves; a poll under way ends with it
      await loop;
      if (failure !== undefined) throw new Error(`${name} stopped consuming: ${String(failure)}`);
    },
  };
}

const until = (what: string, cond: () => boolean, ms: number, explain: () => string) => waitFor(what, ms, cond, { pollMs: 25, explain });

test('kafkajs classic members upgraded one by one to consumer-protocol members and back, with a producer running: nothing skipped, never two owners, commits only forward', {
  timeout: 60_000,
}, async () => {
  const b = await startTestBroker(kip848BrokerProps({ heartbeatMs: 250, offsetsPartitions: 1 }));
  const gc = b.broker.services.groupCoordinator;
  const own = new Ownership();
  const members: Member[] = [];
  const departed: Member[] = [];
  const violations = own.violations;
  const sawMixedGroup = { consumer: false };
  let checking = true;
  const lastCommitted = new Map<number, bigint>();
  const checker = (async () => {
    while (checking) {
      for (const m of members) {
        const ps = m.poll?.();
        if (ps && ps.join() !== (own.owned.get(m.name) ?? []).join()) own.report(m.name, ps);
      }
      const g = gc.runtime.activeShards()[0]?.consumerGroups.get(GROUP);
      if (g) {
        const kinds = new Set([...g.members.values()].map((m) => m.classic !== null));
        if (kinds.size === 2) sawMixedGroup.consumer = true;
        const holder = new Map<string, string>();
        for (const m of g.members.values()) {
          for (const a of [m.assigned, m.pendingRevocation]) {
            for (const [t, ps] of a) {
              for (const p of ps) {
                const other = holder.get(`${t}:${p}`);
                if (other !== undefined && other !== m.memberId) violations.push(`coordinator: partition ${p} held by ${other} and ${m.memberId}`);
                holder.set(`${t}:${p}`, m.memberId);
              }
            }
          }
        }
      }
      const fetched = await gc.fetchOffsets(GROUP, null);
      for (const t of fetched.topics) {
        for (const p of t.partitions) {
          const before = lastCommitted.get(p.partitionIndex);
          if (before !== undefined && p.committedOffset < before)
            violations.push(`partition ${p.partitionIndex} committed offset went back ${before} -> ${p.committedOffset}`);
          lastCommitted.set(p.partitionIndex, p.committedOffset);
        }
      }
      await new Promise((r) => setTimeout(r, 20));
    }
  })();

  const kafka = new Kafka({ clientId: 'migration-producer', brokers: [b.bootstrap], logLevel: logLevel.NOTHING });
  const producer = kafka.producer();
  const sent: string[] = [];
  let producing = true;
  let producerLoop: Promise<void> = Promise.resolve();
  const consumed = () => {
    const all = new Set<string>();
    for (const m of [...members, ...departed]) for (const v of m.values) all.add(v);
    return all;
  };
  const groupState = () => {
    const shard = gc.runtime.activeShards()[0];
    const cg = shard?.consumerGroups.get(GROUP);
    const classic = shard?.groups.get(GROUP);
    return JSON.stringify({
      consumed: consumed().size,
      sent: sent.length,
      owned: [...own.owned],
      violations: violations.slice(0, 5),
      consumerGroup: cg && {
        epoch: cg.groupEpoch,
        state: cg.state,
        members: [...cg.members.values()].map((m) => [m.clientId, m.classic !== null, m.memberEpoch, m.state, [...m.assigned.values()]]),
      },
      classicGroup: classic && { state: classic.state, generation: classic.generationId, members: classic.members.size },
    });
  };
  /** `names` share the six partitions, each with some, as they report it. */
  const sharedBy = (names: string[]) => () =>
    own.all().join() === '0,1,2,3,4,5' &&
    names.every((n) => (own.owned.get(n)?.length ?? 0) > 0) &&
    [...own.owned].every(([n, ps]) => names.includes(n) || ps.length === 0);
  const replace = async (old: Member, next: Member, names: string[]) => {
    members.push(next);
    await until(`${next.name} to own partitions`, () => (own.owned.get(next.name)?.length ?? 0) > 0, 20_000, groupState);
    await old.close();
    members.splice(members.indexOf(old), 1);
    departed.push(old);
    await until(`${names.join(', ')} to share the partitions`, sharedBy(names), 20_000, groupState);
  };
  try {
    await b.broker.services.metadata.createTopic({ name: TOPIC, numPartitions: 6, replicationFactor: 1 });
    await b.broker.services.replicaManager.syncTopic(TOPIC);
    await producer.connect();
    producerLoop = (async () => {
      while (producing) {
        const batch = Array.from({ length: 10 }, (_, j) => `v-${sent.length + j}`);
        sent.push(...batch);
        await producer.send({ topic: TOPIC, messages: batch.map((value, j) => ({ key: `k-${j}`, value })) });
        await new Promise((r) => setTimeout(r, 30));
      }
    })();

    const classic = [];
    for (const name of ['k1', 'k2', 'k3']) classic.push(await kafkajsMember(b, name, own));
    members.push(...classic);
    await until('the kafkajs members to share the partitions', sharedBy(['k1', 'k2', 'k3']), 30_000, groupState);
    assert.equal(gc.runtime.activeShards()[0]!.groups.get(GROUP)?.protocolType, 'consumer');

    // Upgrade: each kafkajs member replaced by a consumer-protocol member.
    const modern: Member[] = [];
    for (let i = 0; i < 3; i++) {
      const next = i === 1 ? fjordMember(b, 'f2', own) : await platformaticMember(b, `p${i + 1}`, own);
      modern.push(next);
      await replace(classic[i]!, next, [...modern.map((m) => m.name), ...classic.slice(i + 1).map((m) => m.name)]);
    }
    const upgraded = gc.runtime.activeShards()[0]!;
    assert.equal(upgraded.groups.has(GROUP), false, 'no classic group left');
    assert.deepEqual(
      [...upgraded.consumerGroups.get(GROUP)!.members.values()].map((m) => m.classic),
      [null, null, null],
    );

    // Downgrade: each consumer-protocol member replaced by a kafkajs member again, the Fjord one last.
    const leaving = [modern[0]!, modern[2]!, modern[1]!];
    const back: Member[] = [];
    for (let i = 0; i < 3; i++) {
      const next = await kafkajsMember(b, `j${i + 1}`, own);
      back.push(next);
      await replace(leaving[i]!, next, [...back.map((m) => m.name), ...leaving.slice(i + 1).map((m) => m.name)]);
      if (i === 1) {
        const left = [...gc.runtime.activeShards()[0]!.consumerGroups.get(GROUP)!.members.values()];
        assert.deepEqual(
          left.filter((m) => m.classic === null).map((m) => m.clientId),
          ['f2'],
          'the Fjord member is the last of the consumer protocol',
        );
      }
    }
    const downgraded = gc.runtime.activeShards()[0]!;
    assert.equal(downgraded.consumerGroups.has(GROUP), false, 'a classic group again');
    assert.equal(downgraded.groups.get(GROUP)?.members.size, 3);
    assert.ok(sawMixedGroup.consumer, 'classic and consumer-protocol members were in one consumer group');

    producing = false;
    await producerLoop;
    await until('every record consumed', () => consumed().size === sent.length, 20_000, groupState);
    assert.deepEqual(
      sent.filter((v) => !consumed().has(v)),
      [],
    );
  } finally {
    producing = false;
    await producerLoop.catch(() => undefined);
    checking = false;
    await checker;
    await producer.disconnect().catch(() => undefined);
    for (const m of members) await m.close().catch(() => undefined);
    await b.stop();
  }
  assert.deepEqual(violations, []);
});
