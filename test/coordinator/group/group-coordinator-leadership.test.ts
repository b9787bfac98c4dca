/**
 * GroupCoordinator follows leadership of its `__consumer_offsets` partitions (issue 12): a
 * partition whose leadership moves away while it is still loading must be dropped, not finish
 * loading and serve as if led here; when leadership comes back it is loaded afresh, with what
 * the other leader wrote meanwhile. A transaction marker written while the partition loads
 * (issue 14) still completes the transaction's pending offsets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import pino from 'pino';
import { GroupCoordinator, OFFSETS_TOPIC } from '../../../src/coordinator/group/group-coordinator.js';
import { encodeRecord } from '../../../src/coordinator/group/records.js';
import { fetchOffsets } from '../../../src/coordinator/group/offsets.js';
import { ErrorCode } from '../../../src/protocol/errors.js';
import { defaultBrokerConfig } from '../../../src/server/config/build-broker-config.js';
import type { MetadataStore } from '../../../src/metadata/metadata-store.js';
import type { ReplicaManager } from '../../../src/replication/replica-manager.js';
import { MemoryLog } from '../memory-log.js';

const commit = (offset: bigint) =>
  encodeRecord({
    type: 'offset',
    group: 'g',
    topic: 't',
    partition: 0,
    value: { offset, leaderEpoch: -1, metadata: '', commitTimestamp: BigInt(Date.now()), expireTimestamp: -1n },
  });

/**
 * A GroupCoordinator of broker 0 over one offsets partition held in a MemoryLog, whose replay
 * waits for `releaseLoad()` while `gated`; `partitions[0].leader` says who leads it.
 */
function setup() {
  const config = defaultBrokerConfig({ 'broker.id': '0', 'offsets.topic.num.partitions': '1' });
  const partitions = [{ partition: 0, leader: 0, leaderEpoch: 0, replicas: [0, 1], isr: [0, 1] }];
  const metadata = {
    // 't' exists (one partition), or loading would remove its offsets as a deleted topic's.
    topic: (name: string) =>
      name === OFFSETS_TOPIC
        ? { name, topicId: 'x', internal: true, partitions, configs: {} }
        : name === 't'
          ? { name, topicId: 'y', internal: false, partitions: [{ partition: 0, leader: 1, leaderEpoch: 0, replicas: [1], isr: [1] }], configs: {} }
          : undefined,
    onChange: () => undefined,
    brokers: () => [],
  } as unknown as MetadataStore;
  const replicaManager = { syncTopic: async () => undefined, getPartition: () => undefined } as unknown as ReplicaManager;
  const log = new MemoryLog();
  let releaseLoad!: () => void;
  const gate = new Promise<void>((r) => (releaseLoad = r));
  const state = { gated: true };
  const slowLog = {
    append: log.append.bind(log),
    replay: async (p: number, on: (k: Buffer, v: Buffer | null) => void, onMarker?: (producerId: bigint, commit: boolean) => void) => {
      if (state.gated) await gate;
      return log.replay(p, on, onMarker);
    },
  };
  const gc = new GroupCoordinator({ config, metadata, replicaManager, logger: pino({ level: 'silent' }), log: slowLog });
  return { gc, log, partitions, releaseLoad, state };
}

test('an offsets partition whose leadership moves away while loading is dropped, and loaded afresh when it comes back', async () => {
  const { gc, log, partitions, releaseLoad, state } = setup();
  log.partitions.set(0, [commit(5n)]);
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
  state.gated = false;
  partitions[0]!.leader = 0;
  await gc.syncLeadership();
  assert.equal(gc.runtime.status(0), 'active');
  const offset = await gc.runtime.read(0, (s) => s.offsets.groupOffsets('g').get('t')?.get(0)?.offset);
  assert.equal(offset, 9n, 'the commit the other leader wrote is there');
  gc.shutdown();
});

test('a transaction marker written while the offsets partition loads still makes its pending offsets visible', async () => {
  const { gc, log, releaseLoad } = setup();
  log.partitions.set(0, [commit(5n)]);
  // Producer 7's TxnOffsetCommit, written by the previous leader; its COMMIT marker is not in the log yet.
  await log.append(0, [commit(10n)], Date.now(), { producerId: 7n, producerEpoch: 0 });
  const loading = gc.syncLeadership();
  await new Promise((r) => setImmediate(r));
  assert.equal(gc.runtime.status(0), 'loading');
  // The transaction coordinator's marker reaches this new leader, past the end the load reads
  // to, and the partition tells the group coordinator (the txnMarkerListeners path).
  const applied = gc.onTransactionCompleted(0, 7n, true);
  releaseLoad();
  await loading;
  await applied;
  const got = await gc.runtime.read(0, (s) => fetchOffsets(s, 'g', [{ name: 't', partitions: [0] }], true)[0]!.partitions[0]!);
  assert.deepEqual([got.committedOffset, got.errorCode], [10n, ErrorCode.NONE], "the committed transaction's offset is visible, not pending for ever");
  gc.shutdown();
});
