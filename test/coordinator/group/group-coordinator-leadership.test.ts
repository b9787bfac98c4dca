/**
 * GroupCoordinator follows leadership of its `__consumer_offsets` partitions (issue 12): a
 * partition whose leadership moves away while it is still loading must be dropped, not finish
 * loading and serve as if led here; when leadership comes back it is loaded afresh, with what
 * the other leader wrote meanwhile.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { GroupCoordinator, OFFSETS_TOPIC } from '../../../src/coordinator/group/group-coordinator.js';
import { encodeRecord } from '../../../src/coordinator/group/records.js';
import { defaultBrokerConfig } from '../../../src/server/config/broker-config.js';
import type { MetadataStore } from '../../../src/metadata/metadata-store.js';
import type { ReplicaManager } from '../../../src/replication/replica-manager.js';
import { MemoryLog } from '../memory-log.js';

const commit = (offset: bigint) =>
  encodeRecord({ type: 'offset', group: 'g', topic: 't', partition: 0, value: { offset, leaderEpoch: -1, metadata: '', commitTimestamp: BigInt(Date.now()), expireTimestamp: -1n } });

test('an offsets partition whose leadership moves away while loading is dropped, and loaded afresh when it comes back', async () => {
  const config = defaultBrokerConfig({ 'broker.id': '0', 'offsets.topic.num.partitions': '1' });
  const partitions = [{ partition: 0, leader: 0, leaderEpoch: 0, replicas: [0, 1], isr: [0, 1] }];
  const metadata = {
    // 't' exists (one partition), or loading would remove its offsets as a deleted topic's.
    topic: (name: string) =>
      name === OFFSETS_TOPIC ? { name, topicId: 'x', internal: true, partitions, configs: {} }
      : name === 't' ? { name, topicId: 'y', internal: false, partitions: [{ partition: 0, leader: 1, leaderEpoch: 0, replicas: [1], isr: [1] }], configs: {} }
      : undefined,
    onChange: () => undefined,
    brokers: () => [],
  } as unknown as MetadataStore;
  const replicaManager = { syncTopic: async () => undefined, getPartition: () => undefined } as unknown as ReplicaManager;
  const log = new MemoryLog();
  log.partitions.set(0, [commit(5n)]);
  let releaseLoad!: () => void;
  const gate = new Promise<void>((r) => (releaseLoad = r));
  let gated = true;
  const slowLog = {
    append: log.append.bind(log),
    replay: async (p: number, on: (k: Buffer, v: Buffer | null) => void) => {
      if (gated) await gate;
      return log.replay(p, on);
    },
  };
  const gc = new GroupCoordinator({ config, metadata, replicaManager, logger: pino({ level: 'silent' }), log: slowLog });
  const firstLoad = gc.syncLeadership();
  await new Promise((r) => setImmediate(r)); // one event-loop turn: past syncTopic, into the (gated) replay
  assert.equal(gc.runtime.status(0), 'loading');

  // Leadership moves to broker 1 before the load finished.
  partitions[0]!.leader = 1;
  await gc.syncLeadership();
  assert.equal(gc.runtime.status(0), 'none', 'a partition no longer led here is dropped, even while loading');
  releaseLoad();
  await firstLoad;
  assert.equal(gc.runtime.status(0), 'none', 'the abandoned load does not make it active');

  // Broker 1 led it meanwhile and wrote a commit; leadership comes back: loaded afresh.
  log.partitions.get(0)!.push(commit(9n));
  gated = false;
  partitions[0]!.leader = 0;
  await gc.syncLeadership();
  assert.equal(gc.runtime.status(0), 'active');
  const offset = await gc.runtime.read(0, (s) => s.offsets.groupOffsets('g').get('t')?.get(0)?.offset);
  assert.equal(offset, 9n, 'the commit the other leader wrote is there');
  gc.shutdown();
});
