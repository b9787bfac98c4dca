/**
 * What a shard worker hosts (docs/threads.md step 1): its partitions' logs, opened by a
 * LogManager that owns only them (storage/manager/dirs-shard.ts: the main thread keeps the
 * directory's shared files), and today's ReplicaManager over a metadata mirror that shows only
 * them as led here, so appends, acks, producer state, fetches and long polls are the in-thread
 * code, run per shard. Each message from the main thread is handled here and answered by `post`.
 */
import type { Logger } from 'pino';
import { LogManager } from '../../../storage/manager/log-manager.js';
import { ReplicaManager } from '../../replica-manager.js';
import { topicLogConfig } from '../../log-config.js';
import { logManagerOptions, type LogManagerSettings } from '../log-manager-options.js';
import { MetadataMirror } from './metadata-mirror.js';
import { CheckpointHandover } from './checkpoint-handover.js';
import { InThreadShards } from '../in-thread-shards.js';
import { shardOf } from '../partition-shards.js';
import type { LogConfig } from '../../../storage/config.js';
import type { BrokerEndpoint, FromShard, RecordsWindow, ShardFetchResult, ShardInit, ToShard } from './shard-protocol.js';
import { messageOf } from '../../../common/errors.js';
import { DelayedFetch } from '../../fetch/delayed-fetch.js';
import type { Partition } from '../../partition/partition.js';
import { restoredSecurity, type ClusterHooks } from './cluster-hooks.js';
import { resumableStates } from './resumed-leaders.js';
import type { LeaderAndIsrPartition } from '../../hosting/role-changes.js';

export type PostToMain = (m: FromShard, transfer?: ArrayBuffer[]) => void;

/** Fetched records at least this large come from the read pool's own ArrayBuffers and are moved; smaller ones are copied out. */
const MOVE_AT_BYTES = 64 * 1024;

/** A shard started without the broker's settings (the shard tests): LogManager's default intervals, no cleaner. */
const TEST_SETTINGS: LogManagerSettings = {
  checkpointIntervalMs: 60_000,
  retentionCheckIntervalMs: 300_000,
  flushCheckIntervalMs: 1000,
  cleanerEnabled: false,
  cleanerBackoffMs: 15_000,
  maxOpenSegmentFiles: 0,
};

export class ShardHost {
  /** The seam's calls other than produce and fetch, over this shard's partitions only. */
  private readonly inThread: InThreadShards;
  /** Long polls of fetches over several shards parked here, by message id (cross-shard-fetch.ts). */
  private readonly parked = new Map<number, DelayedFetch>();

  private constructor(
    private readonly mirror: MetadataMirror,
    /** This shard's logs and partitions (shard 0's are the broker's own: the coordinators append through them). */
    readonly logs: LogManager,
    readonly replicas: ReplicaManager,
    private readonly post: PostToMain,
    /** Shard 0, on the main thread: messages arrive by reference, so fetched records need no copy. */
    private readonly local: boolean,
    /** Each topic's effective log config as the main thread last sent it. */
    private readonly effective: Map<string, LogConfig>,
    /** This shard's checkpoint reports to the main thread. */
    readonly checkpoints: CheckpointHandover,
    /** Cluster mode: the live brokers' inter-broker endpoints, as last posted (undefined in embedded mode). */
    private readonly brokers: Map<number, BrokerEndpoint> | undefined,
  ) {
    this.inThread = new InThreadShards(replicas, mirror);
  }

  static async open(
    init: ShardInit,
    logger: Logger,
    post: PostToMain,
    local = false,
    /** Where the main thread's answers to checkpoint reports go (they come while the logs open, before this host exists). */
    handover = new CheckpointHandover(post),
    /** Cluster mode: what the shard's ReplicaManager takes that is not data (cluster-hooks.ts). */
    hooks?: ClusterHooks,
  ): Promise<ShardHost> {
    const cluster = init.cluster;
    const security = restoredSecurity(cluster?.security);
    const config = security ? { ...init.config, interBrokerSecurity: security } : init.config;
    const mirror = new MetadataMirror(config.brokerId, init.index, init.shards, cluster !== undefined);
    const brokers = cluster ? new Map(cluster.brokers.map((b) => [b.id, b])) : undefined;
    if (brokers) mirror.setBrokers(cluster!.brokers);
    mirror.apply(init.topics);
    const effective = new Map<string, LogConfig>(Object.entries(init.logConfigs ?? {}));
    // The broker's log settings (absent: the shards alone, as their tests start them, with LogManager's defaults and no cleaner).
    const options = logManagerOptions(config, init.logs ?? TEST_SETTINGS, {
      logger,
      shardIndex: init.index,
      topicConfig: (topic) => {
        const info = mirror.topic(topic);
        return info ? (effective.get(topic) ?? topicLogConfig(options.defaults, info.configs)) : undefined;
      },
      ...(hooks?.metaProperties ? { metaProperties: hooks.metaProperties } : {}),
      shard: {
        owns: (topic, partition) => shardOf(topic, partition, init.shards) === init.index,
        hadCleanShutdown: (dir) => init.hadCleanShutdown[dir] ?? false,
        // Resolves once the main thread has written the files with these entries; reports coalesce meanwhile.
        writeCheckpoints: (dir, entries) => handover.write(dir, entries),
        closed: (dir, unclean, checkpointed) => post({ type: 'closed', dir, unclean: [...unclean], checkpointed }),
      },
    });
    const logs = await LogManager.open(options);
    const stale = new Set(init.deleteLogsOf ?? []);
    const staleParts = new Set((init.deletePartitions ?? []).map(([t, p]) => `${p}:${t}`));
    for (const log of logs.allLogs()) {
      if (stale.has(log.topic) || staleParts.has(`${log.partition}:${log.topic}`)) await logs.deleteLog(log.topic, log.partition);
    }
    const replicas = await ReplicaManager.start({
      config,
      metadata: mirror,
      logManager: logs,
      logger,
      logConfigFor: (topic) => effective.get(topic),
      ...(init.maintenanceIntervalMs !== undefined ? { maintenanceIntervalMs: init.maintenanceIntervalMs } : {}),
      // Cluster mode: the controller opens and drops partitions; followers fetch from their leaders' inter-broker listeners.
      ...(cluster && hooks
        ? {
            controllerManaged: true,
            isrWriter: hooks.isrWriter,
            brokerEndpoint: hooks.brokerEndpoint ?? ((id: number) => brokers!.get(id)),
            ...(hooks.interceptor ? { interBrokerInterceptor: hooks.interceptor } : {}),
          }
        : {}),
    });
    return new ShardHost(mirror, logs, replicas, post, local, effective, handover, brokers);
  }

  /** Handles one message; answers it (or says why it failed). Never rejects. */
  async handle(m: ToShard): Promise<void> {
    if (m.type === 'crash' || m.type === 'stall') return; // the entry throws it (shard-worker.ts): an uncaught error, not an answer
    try {
      switch (m.type) {
        case 'topics':
          for (const [name, cfg] of Object.entries(m.logConfigs ?? {})) this.effective.set(name, cfg);
          this.mirror.apply(m.topics);
          // The mirror's listeners queued the syncs; these share them and wait for the logs.
          await Promise.all(m.topics.map((t) => this.replicas.syncLocalLogs(t.name)));
          // Cluster mode: the controller, not the metadata, says which partitions are hosted here.
          if (!this.brokers) this.checkOpen(m.topics.map((t) => t.name));
          // A dynamic broker default changed (the topic's own configs did not): the running logs take it too.
          for (const [name, cfg] of Object.entries(m.logConfigs ?? {}))
            for (const p of this.mirror.topic(name)?.partitions ?? []) this.replicas.getPartition(name, p.partition)?.log.updateConfig(cfg);
          return this.post({ type: 'done', id: m.id });
        case 'deleteTopic':
          this.mirror.remove(m.topic);
          this.effective.delete(m.topic);
          await this.replicas.syncLocalLogs(m.topic);
          return this.post({ type: 'done', id: m.id });
        case 'produce':
          return await this.produce(m);
        case 'fetch':
          return await this.fetch(m);
        case 'fetchWait':
          return this.park(m);
        case 'fetchWaitEnd':
          return this.parked.get(m.id)?.complete();
        case 'call': {
          const method = this.inThread[m.method] as (...args: unknown[]) => Promise<unknown>;
          return this.post({ type: 'answered', id: m.id, result: await method.apply(this.inThread, m.args) });
        }
        case 'leaderAndIsr': {
          this.setBrokers(m.brokers);
          const { states, refused } = m.resumed ? this.resumable(m.states) : { states: m.states, refused: [] };
          const errors = await this.replicas.becomeLeaderOrFollower(states, (t) => m.configs[t] ?? {});
          return this.post({ type: 'answered', id: m.id, result: [...errors, ...refused] });
        }
        case 'stopReplica':
          return this.post({ type: 'answered', id: m.id, result: [...(await this.replicas.stopReplicas(m.parts))] });
        case 'brokers':
          this.setBrokers(m.brokers);
          return this.post({ type: 'done', id: m.id });
        case 'shutdown':
          for (const wait of [...this.parked.values()]) wait.complete();
          await this.replicas.shutdown();
          await this.logs.shutdown();
          return this.post({ type: 'done', id: m.id });
      }
    } catch (err) {
      this.post({ type: 'failed', id: m.id, message: messageOf(err) });
    }
  }

  /** Cluster mode: the live brokers as the controller last named them (the fetchers' leader addresses; shard 0's read the image). */
  private setBrokers(list: readonly BrokerEndpoint[]): void {
    if (!this.brokers) return;
    this.brokers.clear();
    for (const b of list) this.brokers.set(b.id, b);
    this.mirror.setBrokers(list);
  }

  /** The re-sent states this restarted worker may take up (resumed-leaders.ts; shard-roles.ts logs the refused ones). */
  private resumable(states: LeaderAndIsrPartition[]): ReturnType<typeof resumableStates> {
    // The mirror's controllerId() is this broker's id.
    return resumableStates(states, this.mirror.controllerId(), {
      logEndOffset: (t, p) => this.logs.getLog(t, p)?.logEndOffset,
      checkpointedHighWatermark: (t, p) => this.logs.checkpointedHighWatermark(t, p),
    });
  }

  /** Throws unless every partition of `topics` this shard owns has its log open (topic administration answers that error). */
  private checkOpen(topics: readonly string[]): void {
    for (const name of topics) {
      for (const p of this.mirror.topic(name)?.partitions ?? []) {
        if (p.leader >= 0 && !this.replicas.getPartition(name, p.partition)) throw new Error(`the log of partition ${name}-${p.partition} could not be opened`);
      }
    }
  }

  private async produce(m: Extract<ToShard, { type: 'produce' }>): Promise<void> {
    // Each part takes its partition's arrival turn before the first await: messages are appended in the order they came.
    // Every part settles before the answer, a failed one too: the answer gives the records' memory
    // back to the main thread (a shared frame is reused then), so no part may still read it.
    const settled = await Promise.allSettled(
      m.parts.map((part) => {
        const w = part.records;
        const records = w ? Buffer.from(w.buffer, w.offset, w.length) : null;
        return this.replicas.appendRecords(part.topic, part.partition, records, {
          requiredAcks: m.requiredAcks,
          origin: m.origin,
          ...(m.produceVersion !== undefined ? { produceVersion: m.produceVersion } : {}),
          ...(m.timeoutMs !== undefined ? { timeoutMs: m.timeoutMs } : {}),
          ...(m.internalTopicsAllowed ? { internalTopicsAllowed: true } : {}),
          ...(part.verifiedTxn ? { verifiedTxn: part.verifiedTxn } : {}),
        });
      }),
    );
    const outcomes = settled.map((r) => {
      if (r.status === 'rejected') throw r.reason;
      return r.value;
    });
    this.post({ type: 'produced', id: m.id, outcomes });
  }

  /**
   * Parks a long poll of a fetch over several shards: each append past a part's fetch offset is
   * reported, so the main thread counts every shard's bytes towards min_bytes.
   */
  private park(m: Extract<ToShard, { type: 'fetchWait' }>): void {
    const partitions = new Map<Partition, { fetchOffset: number; seenHighWatermark: number }>();
    for (const part of m.parts) {
      const p = this.replicas.getPartition(part.topic, part.partition);
      if (p?.isLeader) partitions.set(p, { fetchOffset: part.fetchOffset, seenHighWatermark: part.seenHighWatermark });
    }
    const counted = (bytes: number): void => this.post({ type: 'fetchProgress', id: m.id, bytes });
    // A follower's park is woken by appends: its own fetches move the HW, so waiting on the HW would sit out max_wait.
    const wait = new DelayedFetch(partitions, m.minBytes, m.maxWaitMs, new Set(), m.replicaId, counted);
    this.parked.set(m.id, wait);
    void wait.completed.then(() => {
      this.parked.delete(m.id);
      this.post({ type: 'fetchWaited', id: m.id });
    });
  }

  private async fetch(m: Extract<ToShard, { type: 'fetch' }>): Promise<void> {
    const read = await this.replicas.fetch(m.targets, m.params);
    const transfer = new Set<ArrayBuffer>();
    // A follower reads up to the log end: the fetch across shards needs it to know what is left (fetch-budget.ts continueFrom).
    const replica = (m.params.replicaId ?? -1) >= 0;
    const results: ShardFetchResult[] = read.map((r, k) => ({
      ...r,
      ...(replica ? { logEndOffset: this.replicas.getPartition(m.targets[k]!.topic, m.targets[k]!.partition)?.logEndOffset ?? -1 } : {}),
      records: !r.records
        ? null
        : this.local
          ? { buffer: r.records.buffer, offset: r.records.byteOffset, length: r.records.length }
          : windowOf(r.records, transfer),
    }));
    this.post({ type: 'fetched', id: m.id, results }, [...transfer]);
  }
}

/**
 * The records as a window the main thread can take without a structured-clone copy: a large
 * read (the read pool's buffer, its own ArrayBuffer) is moved whole; a small one (a slice of
 * Node's shared 8 KiB pool, which cannot be moved and would be cloned whole) is copied into an
 * ArrayBuffer of its own, which is moved.
 */
function windowOf(records: Buffer, transfer: Set<ArrayBuffer>): RecordsWindow {
  const ab = records.buffer;
  if (ab instanceof ArrayBuffer && records.length >= MOVE_AT_BYTES && ab.byteLength > Buffer.poolSize) {
    transfer.add(ab);
    return { buffer: ab, offset: records.byteOffset, length: records.length };
  }
  const own = Buffer.allocUnsafeSlow(records.length);
  records.copy(own);
  const out = own.buffer as ArrayBuffer;
  transfer.add(out);
  return { buffer: out, offset: own.byteOffset, length: records.length };
}
