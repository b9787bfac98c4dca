/**
 * The ZooKeeper consumer's settings, by their Kafka 0.8 names, and their defaults. Apart from
 * the consumer (zk-consumer.ts) so that its class reads as what it does.
 */
import type { Logger } from 'pino';

export interface ZookeeperConsumerOptions {
  /** zookeeper.connect: `host:port[,host:port][/chroot]`. */
  zookeeperConnect: string;
  /** group.id (required). */
  groupId: string;
  /** consumer.id: default `<group>_<hostname>-<timestampMs>-<8 hex>`, as Kafka 0.8. */
  consumerId?: string;
  /** client.id: default the group id, as Kafka 0.8. */
  clientId?: string;
  /** zookeeper.session.timeout.ms, default 6000. */
  zookeeperSessionTimeoutMs?: number;
  /** zookeeper.connection.timeout.ms, default 6000. */
  zookeeperConnectionTimeoutMs?: number;
  /** auto.commit.enable, default true. */
  autoCommitEnable?: boolean;
  /** auto.commit.interval.ms, default 60000. */
  autoCommitIntervalMs?: number;
  /** auto.offset.reset: where to start without a stored offset, or when it is out of range. Default largest. */
  autoOffsetReset?: 'largest' | 'smallest';
  /** rebalance.max.retries, default 4. */
  rebalanceMaxRetries?: number;
  /** rebalance.backoff.ms, default 2000. */
  rebalanceBackoffMs?: number;
  /** offsets.storage, default zookeeper. */
  offsetsStorage?: 'zookeeper' | 'kafka';
  /** dual.commit.enabled, default true (used only with offsets.storage=kafka). */
  dualCommitEnabled?: boolean;
  /** fetch.min.bytes, default 1. */
  fetchMinBytes?: number;
  /** fetch.wait.max.ms, default 100. */
  fetchWaitMaxMs?: number;
  /** fetch.message.max.bytes, default 1048576 (per partition). */
  fetchMessageMaxBytes?: number;
  /** socket.timeout.ms, default 30000. */
  socketTimeoutMs?: number;
  /** Records per poll, default 500. */
  maxPollRecords?: number;
  logger?: Logger;
}

/** Every setting with its default filled in (the ids and the logger stay optional). */
export type ZookeeperConsumerSettings = Required<Omit<ZookeeperConsumerOptions, 'consumerId' | 'clientId' | 'logger'>>;

/** Kafka 0.8's defaults for what `options` leaves out. */
export function consumerSettings(options: ZookeeperConsumerOptions): ZookeeperConsumerSettings {
  return {
    zookeeperConnect: options.zookeeperConnect,
    groupId: options.groupId,
    zookeeperSessionTimeoutMs: options.zookeeperSessionTimeoutMs ?? 6000,
    zookeeperConnectionTimeoutMs: options.zookeeperConnectionTimeoutMs ?? 6000,
    autoCommitEnable: options.autoCommitEnable ?? true,
    autoCommitIntervalMs: options.autoCommitIntervalMs ?? 60000,
    autoOffsetReset: options.autoOffsetReset ?? 'largest',
    rebalanceMaxRetries: options.rebalanceMaxRetries ?? 4,
    rebalanceBackoffMs: options.rebalanceBackoffMs ?? 2000,
    offsetsStorage: options.offsetsStorage ?? 'zookeeper',
    dualCommitEnabled: options.dualCommitEnabled ?? true,
    fetchMinBytes: options.fetchMinBytes ?? 1,
    fetchWaitMaxMs: options.fetchWaitMaxMs ?? 100,
    fetchMessageMaxBytes: options.fetchMessageMaxBytes ?? 1048576,
    socketTimeoutMs: options.socketTimeoutMs ?? 30000,
    maxPollRecords: options.maxPollRecords ?? 500,
  };
}
