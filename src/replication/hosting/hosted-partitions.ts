/**
 * The partitions this broker hosts: one Partition per (topic, partition) whose log is open here,
 * looked up by name or by topic, opened (the log created when missing) and dropped (with or
 * without their log), and the topic ids LeaderAndIsr named. In embedded mode the hosted set
 * follows the metadata store (syncWithMetadata): logs are created for new topics and partitions,
 * reconfigured when topic configs change, deleted with their topic, and every partition is led
 * here. In cluster mode LeaderAndIsr and StopReplica open and drop partitions (role-changes.ts);
 * metadata changes only reconfigure open logs.
 */
import type { Logger } from 'pino';
import { ZERO_UUID } from '../../protocol/primitives/index.js';
import type { ReplicationConfig } from '../replication-config.js';
import type { MetadataStore } from '../../metadata/metadata-store.js';
import type { PartitionState, TopicInfo } from '../../metadata/cluster-model.js';
import { forEachConcurrently } from '../../common/concurrency.js';
import type { LogManager } from '../../storage/manager/log-manager.js';
import type { LogConfig } from '../../storage/config.js';
import { tpKey } from '../../common/partition-keys.js';
import { brokerLogDefaults, topicLogConfig } from '../log-config.js';
import { Partition, type IsrWriter } from '../partition/partition.js';
import { messageOf } from '../../common/errors.js';
import { StateChangeLog } from '../../common/state-change-log.js';

/** Partitions of one topic whose logs are opened at the same time. */
export const OPEN_CONCURRENCY = 8;

/** What hosting takes of ReplicaManagerOptions (see there). */
export interface HostingOptions {
  config: ReplicationConfig;
  metadata: MetadataStore;
  logManager: LogManager;
  logger: Logger;
  logConfigFor?: (topic: string) => LogConfig | undefined;
  controllerManaged?: boolean;
  isrWriter?: IsrWriter;
}

export class HostedPartitions {
  private readonly partitions = new Map<string, Partition>();
  private readonly byTopic = new Map<string, Set<Partition>>();
  /** Topic id -> name of the topics with a partition hosted here (LeaderAndIsr's ids). */
  private readonly topicIds = new Map<string, string>();
  private readonly logDefaults: LogConfig;
  private readonly brokerId: number;
  private readonly stateChange: StateChangeLog;

  constructor(
    private readonly opts: HostingOptions,
    /** Whether the broker is shutting down: no more logs are opened. */
    private readonly isStopped: () => boolean,
  ) {
    this.logDefaults = brokerLogDefaults(opts.config);
    this.brokerId = opts.config.brokerId;
    this.stateChange = new StateChangeLog(opts.logger);
  }

  /** The partition of `topic` hosted here (leader, or follower in cluster mode), if its log is open. */
  get(topic: string, partition: number): Partition | undefined {
    return this.partitions.get(tpKey(topic, partition));
  }

  ofTopic(topic: string): Partition[] {
    return [...(this.byTopic.get(topic) ?? [])];
  }

  /** Every hosted partition; live, as Map.values (one opened or dropped meanwhile may show or not). */
  values(): IterableIterator<Partition> {
    return this.partitions.values();
  }

  /**
   * The topic a hosted partition's id names. Replica fetches name topics by id, and a follower
   * fetches as soon as its LeaderAndIsr is processed, usually before the controller's
   * UpdateMetadata (sent after LeaderAndIsr) has given the leader's metadata image the new topic's
   * id: the leader knows it from its own LeaderAndIsr already. Without this the follower's first
   * fetch is answered UNKNOWN_TOPIC_ID and it backs off replica.fetch.backoff.ms (1 s), which
   * stalls every acks=all produce to a new topic for that long.
   */
  topicName(topicId: string): string | undefined {
    const name = this.topicIds.get(topicId);
    // Only while a partition of that name still has that id (not a deleted and re-created topic's).
    for (const p of this.byTopic.get(name ?? '') ?? []) if (p.topicId === topicId) return name;
    return undefined;
  }

  /** Remembers `p`'s topic id (set when opened, or later by LeaderAndIsr). */
  noteTopicId(p: Partition): void {
    if (p.topicId && p.topicId !== ZERO_UUID) this.topicIds.set(p.topicId, p.topic);
  }

  /** The log config of `topic`: the admin service's effective one, else its overrides over the broker defaults. */
  logConfigOf(topic: string, overrides: Record<string, string>): LogConfig {
    try {
      return this.opts.logConfigFor?.(topic) ?? topicLogConfig(this.logDefaults, overrides);
    } catch (err) {
      this.opts.logger.warn({ topic, err: messageOf(err) }, 'invalid topic config; using broker defaults');
      return this.logDefaults;
    }
  }

  /**
   * Brings the logs of `name` in line with metadata: creates/opens the logs of partitions led
   * here (topic config over broker defaults), applies config changes, deletes logs of a deleted
   * (or deleted and re-created) topic. Cluster mode: only reconfigures the logs open here.
   * The caller serialises calls.
   */
  async syncWithMetadata(name: string): Promise<void> {
    if (this.isStopped()) return;
    if (this.opts.controllerManaged) return this.reconfigureTopic(name);
    const info = this.opts.metadata.topic(name);
    const current = this.byTopic.get(name) ?? new Set<Partition>();
    const stale = [...current].filter((p) => !info || p.topicId !== info.topicId);
    for (const p of stale) await this.drop(p, true);
    if (!info) return;
    const cfg = this.logConfigOf(name, info.configs);
    const toOpen: PartitionState[] = [];
    for (const ps of info.partitions) {
      const existing = this.get(name, ps.partition);
      if (ps.leader !== this.brokerId) {
        if (existing) await this.drop(existing, false);
        continue;
      }
      if (existing) {
        existing.leaderEpoch = ps.leaderEpoch;
        existing.log.updateConfig(cfg);
        continue;
      }
      toOpen.push(ps);
    }
    // A few at once: opening a log is a handful of small file operations, bound by their latency.
    // The first failure stops taking new ones and is thrown once those in flight are done.
    let failure: { err: unknown } | undefined;
    await forEachConcurrently(toOpen, OPEN_CONCURRENCY, async (ps) => {
      // Shutting down: stop opening logs (a topic may have thousands), SIGTERM must not wait for them.
      if (failure || this.isStopped()) return;
      try {
        await this.open(info, ps.partition, ps.leaderEpoch, cfg);
        const self = [this.brokerId];
        this.stateChange.becomeLeaderOrFollower(
          name,
          ps.partition,
          this.brokerId,
          { leader: this.brokerId, leaderEpoch: ps.leaderEpoch, isr: self, replicas: self, partitionEpoch: -1 },
          -1,
          -1,
        );
      } catch (err) {
        failure ??= { err };
      }
    });
    if (failure) throw failure.err;
    if (this.isStopped()) return;
    // Partitions removed from metadata: only the undo of a CreatePartitions that failed part-way
    // does that (Kafka never shrinks a topic), so their logs go too.
    const count = info.partitions.length;
    for (const p of this.byTopic.get(name) ?? []) {
      if (p.partition >= count) await this.drop(p, true);
    }
  }

  /** Cluster mode's sync: the image only changes the configs of the logs open here. */
  private reconfigureTopic(name: string): void {
    const info = this.opts.metadata.topic(name);
    const open = this.byTopic.get(name);
    if (!info || !open) return;
    const cfg = this.logConfigOf(name, info.configs);
    for (const p of open) p.log.updateConfig(cfg);
  }

  /**
   * Opens the partition's log (created when missing) and hosts it. Embedded mode: led here, ISR =
   * replicas = [self]. Cluster mode: LeaderAndIsr says next (makeLeader/makeFollower).
   */
  async open(info: Pick<TopicInfo, 'name' | 'topicId'>, partition: number, leaderEpoch: number, cfg: LogConfig): Promise<Partition> {
    const lm = this.opts.logManager;
    let log = lm.getLog(info.name, partition);
    const created = !log;
    if (log) log.updateConfig(cfg);
    else log = await lm.createLog(info.name, partition, cfg);
    let p: Partition;
    // Cluster mode: only what the checkpoint says was replicated is committed; a single broker's whole log is.
    const initialHw = this.opts.controllerManaged ? (lm.checkpointedHighWatermark(info.name, partition) ?? 0) : undefined;
    try {
      p = await Partition.open(log, info.topicId, leaderEpoch, undefined, initialHw);
    } catch (err) {
      // A log created just now for nothing: remove it rather than leave a half-made partition behind.
      if (created) await lm.deleteLog(info.name, partition).catch(() => undefined);
      throw err;
    }
    p.isrWriter = this.opts.isrWriter;
    if (this.opts.controllerManaged) p.leaderId = this.brokerId;
    else await p.makeLeader(this.brokerId, leaderEpoch);
    this.partitions.set(tpKey(info.name, partition), p);
    let set = this.byTopic.get(info.name);
    if (!set) this.byTopic.set(info.name, (set = new Set()));
    set.add(p);
    this.noteTopicId(p);
    return p;
  }

  /** Stops hosting `p`: its waiters are answered, its log deleted or (producer state snapshotted) left on disk. */
  async drop(p: Partition, deleteLog: boolean): Promise<void> {
    this.partitions.delete(tpKey(p.topic, p.partition));
    const set = this.byTopic.get(p.topic);
    set?.delete(p);
    if (set && set.size === 0) {
      this.byTopic.delete(p.topic);
      if (this.topicIds.get(p.topicId) === p.topic) this.topicIds.delete(p.topicId);
    }
    // Wake fetches parked on it; their re-read reports the partition as gone.
    for (const w of [...p.waiters, ...p.replicaWaiters]) w.onAppend(p, Number.MAX_SAFE_INTEGER, 0);
    // acks=all produces waiting on it are answered NOT_LEADER_OR_FOLLOWER.
    if (p.isLeader) p.makeFollower(-1, p.leaderEpoch);
    if (deleteLog) await this.opts.logManager.deleteLog(p.topic, p.partition);
    else await p.snapshotProducerState(true).catch(() => undefined);
  }
}
