/**
 * Cluster mode: whether the leaders of new partitions serve them yet. A broker learns a new
 * topic's leaders from the controller's UpdateMetadata, which the controller sends every broker
 * on that broker's own queue, as it sends each replica its LeaderAndIsr; the broker that created
 * the topic (the controller, for CreateTopics) can therefore list a leader before that leader has
 * applied its LeaderAndIsr, and a client producing at once is answered "This server does not host
 * this topic-partition". Kafka's ZooKeeper-mode CreateTopics has the same window: it waits only
 * until the receiving broker's metadata cache shows a leader for every partition
 * (DelayedCreatePartitions). Fjord also waits until each leader lists itself as the partition's
 * leader at the expected leader epoch in its own Metadata answer (asked over the inter-broker
 * listener; this broker's replica manager directly when it leads). A broker applies LeaderAndIsr
 * and UpdateMetadata one at a time in arrival order, LeaderAndIsr's partitions opened before it
 * answers, and the controller sends LeaderAndIsr first, so a leader that lists itself serves.
 *
 * The leaders are asked again with a backoff (5 ms doubling to 100 ms) until they all serve or
 * the time is up: the readiness of a partition is another broker's state, with no event here.
 */
import type { Logger } from 'pino';
import { Api } from '../../client/apis.js';
import type { BrokerConnections } from '../../client/broker-connections.js';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import type { MetadataResponse } from '../../protocol/messages/index.js';
import { ErrorCode } from '../../protocol/errors.js';
import { ZERO_UUID } from '../../protocol/primitives/index.js';
import { messageOf } from '../../common/errors.js';

export interface PartitionRef {
  topic: string;
  partition: number;
}

/** What the leader must show: itself as leader at this epoch or a later one, for this topic id. */
interface Expected extends PartitionRef {
  topicId: string;
  leader: number;
  leaderEpoch: number;
}

export interface LeaderReadinessOptions {
  brokerId: number;
  metadata: MetadataStore;
  /** Whether this broker's replica manager leads the partition at `leaderEpoch` or a later epoch. */
  leadsHere(topic: string, partition: number, leaderEpoch: number): boolean;
  connections: BrokerConnections;
  logger: Logger;
}

const FIRST_BACKOFF_MS = 5;
const MAX_BACKOFF_MS = 100;
/** A leader's answer is waited for at least this long, even when the caller's time is nearly up. */
const MIN_PROBE_TIMEOUT_MS = 100;

export class LeaderReadiness {
  constructor(private readonly opts: LeaderReadinessOptions) {}

  /**
   * Waits until the leader of every partition of `topics` (as this broker's metadata shows them)
   * serves it, for up to `timeoutMs` (the leaders are asked at least once); resolves with the
   * partitions still not served. Topics this broker does not know are skipped.
   */
  async awaitServing(topics: readonly string[], timeoutMs: number): Promise<PartitionRef[]> {
    const deadline = Date.now() + Math.max(0, timeoutMs);
    let pending: PartitionRef[] = topics.flatMap((topic) =>
      (this.opts.metadata.topic(topic)?.partitions ?? []).map((p) => ({ topic, partition: p.partition })),
    );
    for (let backoff = FIRST_BACKOFF_MS; ; backoff = Math.min(backoff * 2, MAX_BACKOFF_MS)) {
      pending = await this.notServing(pending, deadline);
      const left = deadline - Date.now();
      if (pending.length === 0 || left <= 0) return pending;
      await new Promise((resolve) => setTimeout(resolve, Math.min(backoff, left)));
    }
  }

  /** The partitions of `refs` whose leader does not serve them yet (one round of questions). */
  private async notServing(refs: readonly PartitionRef[], deadline: number): Promise<PartitionRef[]> {
    const byLeader = new Map<number, Expected[]>();
    const leaderless: PartitionRef[] = [];
    for (const ref of refs) {
      // Read again every round: a leader elected again meanwhile is what must serve now.
      const t = this.opts.metadata.topic(ref.topic);
      const ps = t?.partitions.find((p) => p.partition === ref.partition);
      if (!t || !ps) continue; // deleted meanwhile: nothing to wait for
      if (ps.leader < 0) {
        leaderless.push(ref);
        continue;
      }
      const e: Expected = { ...ref, topicId: t.topicId, leader: ps.leader, leaderEpoch: ps.leaderEpoch };
      const list = byLeader.get(ps.leader);
      if (list)
        list.push(e); // in place: a copy per partition is quadratic
      else byLeader.set(ps.leader, [e]);
    }
    const asked = await Promise.all(
      [...byLeader].map(([leader, expected]) =>
        leader === this.opts.brokerId
          ? expected.filter((e) => !this.opts.leadsHere(e.topic, e.partition, e.leaderEpoch))
          : this.ask(leader, expected, deadline),
      ),
    );
    return [...leaderless, ...asked.flat()].map((e) => ({ topic: e.topic, partition: e.partition }));
  }

  /** Asks `leader` for its Metadata of the topics: the expected partitions it does not serve yet. */
  private async ask(leader: number, expected: Expected[], deadline: number): Promise<Expected[]> {
    const { connections } = this.opts;
    let res: MetadataResponse;
    try {
      const conn = await connections.connection(leader);
      const version = conn.versionFor(Api.Metadata);
      if (version === null) return [];
      const names = [...new Set(expected.map((e) => e.topic))];
      const timeoutMs = Math.max(MIN_PROBE_TIMEOUT_MS, deadline - Date.now());
      res = await connections.send(leader, conn, Api.Metadata, { topics: names.map((name) => ({ name })), allowAutoTopicCreation: false }, version, timeoutMs);
    } catch (err) {
      this.opts.logger.debug({ brokerId: leader, err: messageOf(err) }, 'cannot ask a new partition leader whether it serves');
      return expected;
    }
    const topics = new Map(res.topics.map((t) => [t.name ?? '', t]));
    return expected.filter((e) => {
      const t = topics.get(e.topic);
      if (!t) return true;
      // Not the inter-broker principal's to describe: nothing to learn by asking again.
      if (t.errorCode === ErrorCode.TOPIC_AUTHORIZATION_FAILED) return false;
      if (t.errorCode !== ErrorCode.NONE) return true;
      if (t.topicId !== ZERO_UUID && e.topicId !== ZERO_UUID && t.topicId !== e.topicId) return true; // an older topic of that name
      const p = t.partitions.find((x) => x.partitionIndex === e.partition);
      if (!p) return true;
      // A later epoch led by another broker: leadership moved on; clients will learn the new leader.
      if (p.leaderEpoch > e.leaderEpoch && p.leaderId !== e.leader) return false;
      return !(p.leaderId === e.leader && p.leaderEpoch >= e.leaderEpoch);
    });
  }
}
