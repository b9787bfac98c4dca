/**
 * The follower's incremental fetch session (KIP-227) against a real broker as leader: one full
 * fetch creates the session, later ones carry only partitions that moved, removed partitions are
 * forgotten, and an evicted session is replaced without losing data.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CompressionType, encodeBatch } from '../../src/protocol/records/index.js';
import { silentLogger } from '../../src/server/logger.js';
import type { Partition } from '../../src/replication/partition/partition.js';
import { ReplicaFetcher } from '../../src/replication/fetcher/replica-fetcher.js';
import { RemoteLeaderEndpoint } from '../../src/replication/fetcher/remote-leader.js';
import { followerReplicaOf } from '../../src/replication/fetcher/manager.js';
import { startTestBroker } from '../helpers/broker.js';
import { TEST_FETCHER_CONFIG, logBytes, openPartition, tempDir, waitFor } from './fetcher-helpers.js';

const FOLLOWER_ID = 2;
/**
 * The leader stays single-threaded (num.io.threads=1, whatever FJORD_TEST_IO_THREADS says): the
 * test makes the embedded broker's own Partition believe a follower is among its replicas
 * (makeLeader with ISR and replicas) and compares its log byte for byte, which needs the
 * Partition on this thread. With shard workers a user topic's Partition lives on a worker and the
 * shards serve embedded mode only (ISR [self]: docs/threads.md step 1), so there is no leader
 * with followers to test there yet.
 */
const LEADER_PROPS = { 'num.io.threads': '1' };

test('replica fetches use an incremental fetch session; forgotten partitions and an evicted session are handled', async () => {
  const leader = await startTestBroker(LEADER_PROPS);
  const f = await tempDir('fjord-follower-');
  const endpoint = new RemoteLeaderEndpoint({
    brokerId: FOLLOWER_ID,
    leaderId: 0,
    endpointOf: () => ({ host: '127.0.0.1', port: leader.port }),
    socketTimeoutMs: 5000,
    clientId: 'test-follower',
  });
  const fetcher = new ReplicaFetcher(endpoint, 0, TEST_FETCHER_CONFIG, silentLogger());
  const followers: Partition[] = [];
  try {
    const rmL = leader.broker.services.replicaManager;
    const info = await leader.broker.services.metadata.createTopic({ name: 'sess', numPartitions: 3, replicationFactor: 1 });
    await rmL.syncTopic('sess');
    const leaders = [0, 1, 2].map((p) => rmL.getPartition('sess', p)!);
    for (const p of leaders) {
      const makeLeader = p.makeLeader as (selfId: number, leaderEpoch: number, isr?: readonly number[], replicas?: readonly number[]) => void;
      makeLeader.call(p, 0, p.leaderEpoch, [0], [0, FOLLOWER_ID]);
    }
    const produce = async (partition: number, tag: string): Promise<void> => {
      const batch = encodeBatch({
        records: [{ attributes: 0, timestampDelta: 0, offsetDelta: 0, key: null, value: Buffer.from(tag), headers: [] }],
        compression: CompressionType.None,
        baseTimestamp: BigInt(Date.now()),
      });
      const r = await rmL.appendRecords('sess', partition, batch, { requiredAcks: 1, origin: 'client', produceVersion: 9 });
      assert.equal(r.errorCode, 0);
    };
    for (let p = 0; p < 3; p++) {
      await produce(p, `first-${p}`);
      followers.push(await openPartition(f.dir, 'sess', p));
    }
    fetcher.start();
    fetcher.addPartitions(
      followers.map((p, i) => ({ replica: followerReplicaOf(p), topicId: info.topicId, leaderId: 0, leaderEpoch: leaders[i]!.leaderEpoch, fetchOffset: 0 })),
    );
    const copied = (): Promise<boolean> =>
      Promise.all(
        followers.map(async (p, i) => p.logEndOffset === leaders[i]!.logEndOffset && (await logBytes(p.log)).equals(await logBytes(leaders[i]!.log))),
      ).then((all) => all.every(Boolean));
    await waitFor('first records copied', copied);
    for (let i = 0; i < 5; i++) await produce(0, `more-${i}`);
    await waitFor('partition 0 copied', copied);
    const s1 = endpoint.session;
    assert.notEqual(s1.id, 0, 'the leader created a session');
    assert.ok(s1.epoch > 1, `incremental fetches went on (epoch ${s1.epoch})`);
    assert.equal(s1.partitions, 3);
    assert.equal(rmL.fetchService.sessions.get(s1.id)?.partitions.size, 3);

    // Partition 2 leaves the fetcher: the next incremental fetch forgets it.
    await fetcher.removePartitions(['sess-2']);
    await produce(1, 'after-removal');
    await waitFor(
      'session without partition 2',
      () => rmL.fetchService.sessions.get(endpoint.session.id)?.partitions.size === 2 && endpoint.session.partitions === 2,
    );
    await waitFor('partition 1 copied', () => followers[1]!.logEndOffset === leaders[1]!.logEndOffset);

    // The leader evicts the session: FETCH_SESSION_ID_NOT_FOUND, a new session, nothing lost.
    const old = endpoint.session.id;
    rmL.fetchService.sessions.remove(old);
    await produce(0, 'after-eviction');
    await produce(1, 'after-eviction');
    // (A fetch parked before the eviction may still answer; the next one meets the error.)
    const fresh = await waitFor('a new session', () => endpoint.session.id !== 0 && endpoint.session.id !== old && endpoint.session.id);
    assert.equal(rmL.fetchService.sessions.get(fresh)?.partitions.size, 2);
    await produce(0, 'in-the-new-session');
    await waitFor(
      'copied after eviction',
      () => followers[0]!.logEndOffset === leaders[0]!.logEndOffset && followers[1]!.logEndOffset === leaders[1]!.logEndOffset,
    );
    assert.ok((await logBytes(followers[0]!.log)).equals(await logBytes(leaders[0]!.log)));
  } finally {
    await fetcher.shutdown();
    for (const p of followers) await p.log.close();
    await f.remove();
    await leader.stop();
  }
});
