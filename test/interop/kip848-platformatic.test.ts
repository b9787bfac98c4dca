/**
 * @platformatic/kafka with `groupProtocol: 'consumer'` (KIP-848) against one broker: three
 * members over six partitions while a producer runs; one member closes (leaves), one is killed
 * (SIGKILL: no leave, the coordinator fences it when its session times out). No record is
 * skipped, no partition is held by two members at once (the coordinator's view, checked all
 * along, and the in-process clients' own views), and committed offsets never go backwards.
 *
 * The members commit as test/helpers/platformatic-commits.ts does: the client, given a new
 * partition, re-delivers records of those it owns, and their commits would move offsets back.
 *
 * The session timeout (6 s) has room for a loaded machine: @platformatic/kafka 2.12 does not
 * rejoin after UNKNOWN_MEMBER_ID (only after FENCED_MEMBER_EPOCH), so a member whose heartbeats
 * were late enough to be removed would stop consuming.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import '../helpers/promise-with-resolvers.js';
import { Consumer, Producer, stringDeserializers, stringSerializers } from '@platformatic/kafka';
import { startTestBroker, type TestBroker } from '../helpers/broker.js';
import { kip848BrokerProps } from '../helpers/kip848-props.js';
import { forwardCommits } from '../helpers/platformatic-commits.js';
import { waitFor } from '../helpers/wait-for.js';

const TOPIC = 'kip848-events';
const GROUP = 'kip848-group';

interface Member {
  name: string;
  values: Set<string>;
  consumer?: Consumer<string, string, string, string>;
  close(): Promise<void>;
}

async function inProcessMember(b: TestBroker, name: string): Promise<Member> {
  const consumer = new Consumer({
    groupId: GROUP,
    clientId: name,
    bootstrapBrokers: [b.bootstrap],
    deserializers: stringDeserializers,
    maxWaitTime: 100,
    groupProtocol: 'consumer',
  });
  const values = new Set<string>();
  const commits = forwardCommits(consumer, TOPIC);
  const stream = await consumer.consume({ topics: [TOPIC], mode: 'committed', fallbackMode: 'earliest', autocommit: false });
  const loop = (async () => {
    for await (const m of stream) {
      // As a well-behaved consumer (Java's drops fetched records of revoked partitions): a record
      // of a partition no longer assigned here is left to its new owner, neither processed nor
      // committed (a late commit would move the new owner's offset back).
      if (!commits.owns(m.partition)) continue;
      values.add(m.value);
      // A commit racing an epoch change gets STALE_MEMBER_EPOCH (as from Kafka 4): it is dropped,
      // and the record consumed again by whoever owns the partition, never lost.
      commits.commit(m);
    }
  })().catch(() => undefined);
  return {
    name,
    values,
    consumer,
    async close() {
      await stream.close();
      await consumer.close(true);
      await loop;
    },
  };
}

function childMember(b: TestBroker, name: string): Promise<Member & { kill(): void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/interop/kip848-member-child.ts', b.bootstrap, GROUP, TOPIC], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const values = new Set<string>();
  let resolve = () => {};
  let reject = (_err: Error) => {};
  const readyPromise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  const ready = { promise: readyPromise, resolve: () => resolve(), reject: (err: Error) => reject(err) };
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const msg = JSON.parse(line) as { ready?: boolean; value?: string };
    if (msg.ready) ready.resolve();
    if (msg.value !== undefined) values.add(msg.value);
  });
  child.on('exit', () => ready.reject(new Error(`${name} exited before it was ready`)));
  const kill = () => void child.kill('SIGKILL');
  return ready.promise.then(() => ({ name, values, kill, close: async () => kill() }));
}

const until = (what: string, cond: () => boolean, ms = 30_000, explain: () => string = () => '') => waitFor(what, ms, cond, { pollMs: 50, explain });

test('@platformatic/kafka KIP-848 members: churn with a producer running, nothing skipped, never two owners, commits only forward', {
  timeout: 90_000,
}, async () => {
  const b = await startTestBroker(kip848BrokerProps({ heartbeatMs: 250, sessionMs: 6000, offsetsPartitions: 1 }));
  const members: Member[] = [];
  const violations: string[] = [];
  const gc = b.broker.services.groupCoordinator;
  let checking = true;
  // The coordinator's view: no partition assigned (or being revoked) to two members at once.
  const lastCommitted = new Map<number, bigint>();
  const checker = (async () => {
    while (checking) {
      for (const shard of gc.runtime.activeShards()) {
        const g = shard.consumerGroups.get(GROUP);
        if (!g) continue;
        const holder = new Map<string, string>();
        for (const m of g.members.values()) {
          for (const a of [m.assigned, m.pendingRevocation]) {
            for (const [t, ps] of a) {
              for (const p of ps) {
                const other = holder.get(`${t}:${p}`);
                if (other !== undefined && other !== m.memberId) violations.push(`partition ${p} held by ${other} and ${m.memberId}`);
                holder.set(`${t}:${p}`, m.memberId);
              }
            }
          }
        }
      }
      // The in-process clients' own views.
      const seen = new Map<number, string>();
      for (const m of members) {
        for (const a of m.consumer?.assignments ?? []) {
          for (const p of a.partitions) {
            const other = seen.get(p);
            if (other !== undefined) violations.push(`clients ${other} and ${m.name} both own partition ${p}`);
            seen.set(p, m.name);
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

  const producer = new Producer({ clientId: 'kip848-producer', bootstrapBrokers: [b.bootstrap], serializers: stringSerializers });
  const sent: string[] = [];
  const produce = async (n: number) => {
    for (let i = 0; i < n; i++) {
      const batch = Array.from({ length: 10 }, (_, j) => `v-${sent.length + j}`);
      sent.push(...batch);
      await producer.send({ messages: batch.map((value, j) => ({ topic: TOPIC, key: `k-${(sent.length + j) % 13}`, value })) });
    }
  };
  const consumedByAll = () => {
    const all = new Set<string>();
    for (const m of members) for (const v of m.values) all.add(v);
    return all;
  };
  /** What the coordinator and the clients hold, for a timeout's message. */
  const groupState = () => {
    const g = gc.runtime.activeShards()[0]?.consumerGroups.get(GROUP);
    const state = g && {
      epoch: g.groupEpoch,
      target: g.assignmentEpoch,
      state: g.state,
      members: [...g.members.values()].map((m) => [
        m.clientId,
        m.memberEpoch,
        m.state,
        m.subscribedTopicNames,
        [...m.assigned.values()],
        [...m.pendingRevocation.values()],
      ]),
    };
    return JSON.stringify({ consumed: consumedByAll().size, sent: sent.length, state, clients: members.map((m) => [m.name, m.consumer?.assignments]) });
  };
  try {
    await b.broker.services.metadata.createTopic({ name: TOPIC, numPartitions: 6, replicationFactor: 1 });
    await b.broker.services.replicaManager.syncTopic(TOPIC);
    const a = await inProcessMember(b, 'a');
    const killed = await childMember(b, 'killed');
    const c = await inProcessMember(b, 'c');
    members.push(a, killed, c);
    await produce(20);
    await until(
      'three members sharing the six partitions',
      () => {
        const g = gc.runtime.activeShards()[0]?.consumerGroups.get(GROUP);
        return g?.state === 'Stable' && g.members.size === 3 && [...g.members.values()].every((m) => m.assigned.size > 0);
      },
      30_000,
      groupState,
    );
    await until('the first records consumed', () => consumedByAll().size >= 100, 30_000, groupState);
    await a.close(); // leaves the group (epoch -1)
    members.splice(members.indexOf(a), 1, { ...a, consumer: undefined });
    await produce(10);
    killed.kill(); // no leave: fenced once its session times out
    await produce(10);
    await until('every record consumed by the members left', () => consumedByAll().size === sent.length, 40_000, groupState);
    const g = gc.runtime.activeShards()[0]!.consumerGroups.get(GROUP)!;
    assert.equal(g.members.size, 1, 'the closed and the killed member are gone');
    const missing = sent.filter((v) => !consumedByAll().has(v));
    assert.deepEqual(missing, []);
    await c.close();
  } finally {
    checking = false;
    await checker;
    await producer.close();
    for (const m of members) await m.close().catch(() => undefined);
    await b.stop();
  }
  assert.deepEqual(violations, []);
});

test('the members commit only forward: not a re-delivered record, nor a partition no longer owned; owned again, afresh', async () => {
  type Offsets = { offsets: { partition: number; offset: bigint }[] };
  const sent: string[] = [];
  const client = {
    assignments: null as { topic: string; partitions: number[] }[] | null,
    commit: async ({ offsets }: Offsets) => void sent.push(offsets.map((o) => `${o.partition}@${o.offset}`).join(' ')),
  };
  const commits = forwardCommits(client as unknown as Consumer<string, string, string, string>, TOPIC);
  const settled = () => new Promise((resolve) => setImmediate(resolve));
  client.assignments = [{ topic: TOPIC, partitions: [0, 1] }];
  commits.commit({ partition: 0, offset: 4n });
  commits.commit({ partition: 1, offset: 7n }); // waits for the commit in flight
  client.assignments = [{ topic: TOPIC, partitions: [0] }]; // 1 revoked meanwhile: its offset is not sent
  await settled();
  commits.commit({ partition: 0, offset: 2n }); // re-delivered after a seek back to the committed offset
  commits.commit({ partition: 1, offset: 8n }); // not owned
  await settled();
  client.assignments = [{ topic: TOPIC, partitions: [1] }];
  client.assignments = [{ topic: TOPIC, partitions: [0, 1] }];
  commits.commit({ partition: 0, offset: 2n }); // a new ownership: from the offset committed by the owner before
  await settled();
  assert.deepEqual(sent, ['0@5', '0@3']);
  assert.equal(commits.owns(1), true);
});
