/**
 * Where a ZooKeeper consumer keeps its offsets (Kafka 0.8.2's migration):
 * offsets.storage=zookeeper (the default) reads and writes `/consumers/<g>/offsets/<t>/<p>`;
 * offsets.storage=kafka commits and fetches through the group coordinator (OffsetCommit and
 * OffsetFetch as a "simple" group, generation -1), and with dual.commit.enabled also writes
 * ZooKeeper and resumes from the larger of the two stores.
 */
import type { Logger } from 'pino';
import type { Cluster } from '../cluster.js';
import { tpKey } from '../../common/partition-keys.js';
import { commitOffsets, fetchCommittedOffsets, type TopicPartition } from '../group/offsets.js';
import type { ZkSession } from '../../metadata/zk/zk-session.js';
import { consumerOffsetPath } from '../../metadata/zk/zk-paths.js';
import { ConsumerOffsetZNode } from '../../metadata/zk/zk-consumer-znodes.js';

export interface ZkConsumerOffsetStoreOptions {
  zk: ZkSession;
  cluster: Cluster;
  groupId: string;
  offsetsStorage: 'zookeeper' | 'kafka';
  dualCommitEnabled: boolean;
  logger: Logger | undefined;
}

export class ZkConsumerOffsetStore {
  /** What was last written (or read) in each offsets znode: unchanged offsets are not rewritten. */
  private readonly checkpointed = new Map<string, bigint>();

  constructor(private readonly o: ZkConsumerOffsetStoreOptions) {}

  async commit(entries: [TopicPartition, bigint][]): Promise<void> {
    if (entries.length === 0) return;
    if (this.o.offsetsStorage === 'kafka') {
      await commitOffsets(
        this.o.cluster,
        { groupId: this.o.groupId, generationId: -1, memberId: '' },
        entries.map(([tp, offset]) => [
          { topic: tp.topic, partition: tp.partition },
          { offset, metadata: '' },
        ]),
      );
      if (!this.o.dualCommitEnabled) return;
    }
    for (const [tp, offset] of entries) {
      const k = tpKey(tp.topic, tp.partition);
      if (this.checkpointed.get(k) === offset) continue;
      await this.writeZkOffset(tp, offset);
      this.checkpointed.set(k, offset);
    }
  }

  /** Stored offsets by `<topic>-<partition>`; null when none (or negative). */
  async fetch(tps: readonly TopicPartition[]): Promise<Map<string, bigint | null>> {
    const out = new Map<string, bigint | null>();
    if (tps.length === 0) return out;
    const zkOffsets = new Map<string, bigint | null>();
    if (this.o.offsetsStorage === 'zookeeper' || this.o.dualCommitEnabled) {
      for (const tp of tps) {
        const offset = await this.readZkOffset(tp);
        zkOffsets.set(tpKey(tp.topic, tp.partition), offset);
        if (offset !== null) this.checkpointed.set(tpKey(tp.topic, tp.partition), offset);
      }
    }
    if (this.o.offsetsStorage === 'zookeeper') return zkOffsets;
    const kafka = await fetchCommittedOffsets(
      this.o.cluster,
      this.o.groupId,
      tps.map((tp) => ({ topic: tp.topic, partition: tp.partition })),
    );
    for (const tp of tps) {
      const k = tpKey(tp.topic, tp.partition);
      const fromKafka = kafka.get(tp.topic)?.get(tp.partition)?.offset ?? -1n;
      // During a migration (dual commit) Kafka 0.8.2 resumed from the larger of the two stores.
      const fromZk = this.o.dualCommitEnabled ? (zkOffsets.get(k) ?? -1n) : -1n;
      const best = fromKafka > fromZk ? fromKafka : fromZk;
      out.set(k, best >= 0n ? best : null);
    }
    return out;
  }

  private async writeZkOffset(tp: TopicPartition, offset: bigint): Promise<void> {
    await this.o.zk.setOrCreate(consumerOffsetPath(this.o.groupId, tp.topic, tp.partition), ConsumerOffsetZNode.encode(offset));
  }

  private async readZkOffset(tp: TopicPartition): Promise<bigint | null> {
    const got = await this.o.zk.getIfExists(consumerOffsetPath(this.o.groupId, tp.topic, tp.partition));
    if (!got) return null;
    try {
      return ConsumerOffsetZNode.decode(got.data);
    } catch (err) {
      this.o.logger?.warn({ partition: tpKey(tp.topic, tp.partition), err: String(err) }, 'ignoring an unreadable stored offset');
      return null;
    }
  }
}
